#!/usr/bin/env bash
# Makes sure promtool, Prometheus's own linter, is installed: the metrics
# tests pipe the exposition and the documented alerts through it. Debian
# ships it only inside the prometheus package (about 19 MB); installing it
# starts nothing the tests use.
set -euo pipefail

command -v promtool >/dev/null 2>&1 && exit 0
echo "ensure-promtool: promtool missing" >&2
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  echo "ensure-promtool: installed $(promtool --version 2>&1 | head -1)" >&2
  exit 0
fi
cat >&2 <<MSG
ensure-promtool: the metrics tests need promtool (skip them with go test -short).
  Debian/Ubuntu: sudo apt-get install prometheus
  macOS:         brew install prometheus
MSG
exit 1
