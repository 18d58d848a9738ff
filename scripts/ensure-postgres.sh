#!/usr/bin/env bash
# Makes sure the PostgreSQL server the tests use answers: 127.0.0.1:5432,
# trust authentication, database "test" (internal/pgtest). A server that
# already answers is left alone: the script then does nothing. Otherwise it
# starts the installed cluster, or installs PostgreSQL (Debian packages)
# and starts it, then lets local TCP connections in without a password and
# creates the database. With RATELIMIT_TEST_DATABASE_URL set, the tests
# use that server and this script does nothing.
set -euo pipefail

host=127.0.0.1 port=5432 db=test
[ -n "${RATELIMIT_TEST_DATABASE_URL:-}" ] && exit 0

answers() {
  command -v psql >/dev/null 2>&1 &&
    psql -h "$host" -p "$port" -U postgres -d "$db" -Atqc 'select 1' >/dev/null 2>&1
}
answers && exit 0

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else return 1; fi
}

install() {
  echo "ensure-postgres: installing PostgreSQL" >&2
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  as_root apt-get install -y -qq postgresql >/dev/null
}

cluster() { ls /etc/postgresql 2>/dev/null | sort -V | tail -1; }

if ! command -v apt-get >/dev/null 2>&1 && [ -z "$(cluster)" ]; then
  cat >&2 <<MSG
ensure-postgres: no PostgreSQL answers at $host:$port (database $db, user postgres, no password).
  Debian/Ubuntu: sudo apt-get install postgresql
  macOS:         brew install postgresql && brew services start postgresql
Or point the tests at a server you run: RATELIMIT_TEST_DATABASE_URL=postgres://user@host:port/db
MSG
  exit 1
fi
[ -n "$(cluster)" ] || install
version=$(cluster)
conf=/etc/postgresql/$version/main
# Local TCP connections without a password, first in the file so that it wins.
if ! grep -Eq "^host[[:space:]]+all[[:space:]]+all[[:space:]]+$host/32[[:space:]]+trust" "$conf/pg_hba.conf"; then
  as_root sed -i "1i host all all $host/32 trust" "$conf/pg_hba.conf"
fi
as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null ||
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main reload
for _ in $(seq 50); do
  pg_isready -q -h "$host" -p "$port" && break
  sleep 0.2
done
psql -h "$host" -p "$port" -U postgres -d postgres -Atqc "select 1 from pg_database where datname = '$db'" | grep -q 1 ||
  psql -h "$host" -p "$port" -U postgres -d postgres -qc "create database $db"
answers || { echo "ensure-postgres: PostgreSQL $version started, but $host:$port does not answer" >&2; exit 1; }
echo "ensure-postgres: PostgreSQL $version answers at $host:$port, database $db" >&2
