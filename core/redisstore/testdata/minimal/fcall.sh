#!/bin/bash
# fcall.sh: server instructions per call of the one-limit GCRA program
# (ratelimit script take_gcra) sent as EVALSHA, and the same body loaded
# as a Redis Function (FUNCTION LOAD) and sent as FCALL, on a redis-server
# run under valgrind --tool=callgrind, counting inside processCommand (the
# command's whole dispatch, the same for both). The counts do not depend
# on the machine's load. Run from the repository root:
#
#   core/redisstore/testdata/minimal/fcall.sh
#
# Each case: 1000 warm-up calls, then N (2000) calls by one redis-benchmark
# client over 1000 keys, twice, alternating.
set -eu
tmp=$(mktemp -d)
port=${PORT:-$((40000 + RANDOM % 20000))}
N=${N:-2000}
trap 'redis-cli -p $port shutdown nosave >/dev/null 2>&1 || true; rm -rf $tmp' EXIT
go run ./cmd/ratelimit script take_gcra | sed '/^if redis.replicate_commands then$/,/^end$/d' > $tmp/body.lua
{ echo '#!lua name=ratelimit_bench'; echo "redis.register_function('take_gcra', function(KEYS, ARGV)";
  cat $tmp/body.lua; echo 'end)'; } > $tmp/lib.lua
valgrind --tool=callgrind --callgrind-out-file=$tmp/cg.out --collect-atstart=no \
  --toggle-collect=processCommand redis-server --port $port --save '' --appendonly no >$tmp/log 2>&1 &
vpid=$!
for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
sha=$(redis-cli -p $port script load "$(go run ./cmd/ratelimit script take_gcra)")
redis-cli -p $port function load "$(cat $tmp/lib.lua)" >/dev/null
measure() { # label command...
  local label=$1; shift
  redis-benchmark -p $port -n 1000 -c 1 -r 1000 "$@" >/dev/null
  callgrind_control -z $vpid >/dev/null 2>&1
  redis-benchmark -p $port -n $N -c 1 -r 1000 "$@" >/dev/null
  callgrind_control -d $label $vpid >/dev/null 2>&1
  local ir; ir=$(grep -E '^(summary|totals):' $(ls -t $tmp/cg.out.* | head -1) | head -1 | awk '{print $2}')
  echo $(( ir / N ))
}
printf "%-8s %9s %9s %9s\n" round EVALSHA FCALL FCALL/EVALSHA
for r in 1 2; do
  e=$(measure evalsha-$r EVALSHA $sha 1 "e:{__rand_int__}" 1000000 60000000)
  f=$(measure fcall-$r FCALL take_gcra 1 "f:{__rand_int__}" 1000000 60000000)
  awk -v r=$r -v e=$e -v f=$f 'BEGIN { printf "%-8s %9d %9d %9.3f\n", r, e, f, f / e }'
done
