#!/bin/bash
# callgrind.sh: server instructions per EVALSHA of each one-limit program
# (ratelimit script take_<algorithm>) next to a minimal script of the same
# commands, ARGV and state fields (testdata/minimal/<algorithm>.lua), and to
# the program "take" given the same limit, on a redis-server run under
# valgrind --tool=callgrind, counting only inside evalShaCommand. The counts
# do not depend on the machine's load. Run from the repository root:
#
#   core/redisstore/testdata/minimal/callgrind.sh
#
# Each case: 1000 warm-up calls, then N (2000) calls by one redis-benchmark
# client over 1000 keys; the limit (10^6 per minute) admits every take and
# keeps every key live (a sliding log of a few runs).
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'redis-cli -p $port shutdown nosave >/dev/null 2>&1 || true; rm -rf $tmp' EXIT
port=${PORT:-$((40000 + RANDOM % 20000))}
N=${N:-2000}
go run ./cmd/ratelimit script take > $tmp/take.lua
valgrind --tool=callgrind --callgrind-out-file=$tmp/cg.out --collect-atstart=no \
  --toggle-collect=evalShaCommand redis-server --port $port --save '' --appendonly no >$tmp/log 2>&1 &
vpid=$!
for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
measure() { # label file key args...
  local label=$1 file=$2 key=$3; shift 3
  local sha; sha=$(redis-cli -p $port script load "$(cat $file)")
  redis-benchmark -p $port -n 1000 -c 1 -r 1000 EVALSHA $sha 1 "$key" "$@" >/dev/null
  callgrind_control -z $vpid >/dev/null 2>&1
  redis-benchmark -p $port -n $N -c 1 -r 1000 EVALSHA $sha 1 "$key" "$@" >/dev/null
  callgrind_control -d $label $vpid >/dev/null 2>&1
  local ir; ir=$(grep -E '^(summary|totals):' $(ls -t $tmp/cg.out.* | head -1) | head -1 | awk '{print $2}')
  echo $(( ir / N ))
}
printf "%-15s %9s %9s %9s %7s %7s\n" algorithm minimal lean take lean/min lean/take
i=0
for a in gcra token_bucket fixed_window sliding_window sliding_log; do
  go run ./cmd/ratelimit script take_$a > $tmp/lean.lua
  min=$(measure min-$a $dir/$a.lua "min-$a:{__rand_int__}" 1000000 60000000)
  lean=$(measure lean-$a $tmp/lean.lua "lean-$a:{__rand_int__}" 1000000 60000000)
  take=$(measure take-$a $tmp/take.lua "take-$a:{__rand_int__}" '' 1 $i 1000000 60000000 1000000)
  awk -v a=$a -v m=$min -v l=$lean -v t=$take 'BEGIN { printf "%-15s %9d %9d %9d %7.3f %7.3f\n", a, m, l, t, l / m, l / t }'
  i=$((i + 1))
done
