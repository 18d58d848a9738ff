#!/usr/bin/env bash
# Makes sure the binaries the Redis tests start are installed: redis-server
# and redis-cli (and redis-sentinel for the failover tests). The tests start
# their own throwaway servers on free ports; nothing here starts a service.
set -euo pipefail

missing=()
for bin in redis-server redis-cli; do
  command -v "$bin" >/dev/null 2>&1 || missing+=("$bin")
done
command -v redis-sentinel >/dev/null 2>&1 || [ -x /usr/bin/redis-sentinel ] || missing+=(redis-sentinel)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "ensure-redis: missing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq redis-server redis-tools redis-sentinel >/dev/null
  echo "ensure-redis: installed $(redis-server --version | cut -d' ' -f1-3)" >&2
  exit 0
fi
cat >&2 <<MSG
ensure-redis: the tests need a real redis-server (and redis-cli).
  Debian/Ubuntu: sudo apt-get install redis-server redis-tools redis-sentinel
  macOS:         brew install redis
Or point the tests at servers you run yourself:
  REDIS_URL=redis://127.0.0.1:6379/0  REDIS_CLUSTER_ADDRS=127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002
MSG
exit 1
