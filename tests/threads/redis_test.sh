#!/bin/sh
# Live test on a real stripped binary: sample Debian's redis-server under
# redis-benchmark. Needs root (or CAP_PERFMON) and redis-server/redis-tools.
#   [REDIS_ARGS="--io-threads 3"] redis_test.sh SAMPLE_TEST [SECONDS] [sample_test options...]
# Exit 77 (skipped) when redis is not installed.
set -u
sample_test=$1
seconds=${2:-10}
shift; [ $# -gt 0 ] && shift
port=6390
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || {
	echo "redis-server/redis-benchmark not installed: skipped"; exit 77; }

if redis-cli -p $port ping >/dev/null 2>&1; then
	echo "port $port is already served: not our redis, stopping"; exit 1
fi
redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --daemonize no ${REDIS_ARGS:-} \
	>/tmp/redis_test.$$.log 2>&1 &
redis=$!
cleanup() { kill $redis 2>/dev/null; [ -n "${bench:-}" ] && kill $bench 2>/dev/null; }
trap cleanup EXIT
trap 'cleanup; exit 1' HUP INT PIPE TERM
for i in $(seq 50); do
	redis-cli -p $port ping >/dev/null 2>&1 && break
	sleep 0.1
done

redis-benchmark -p $port -n 100000 -q >/tmp/redis_bench.$$.log 2>&1 &
bench=$!
"$sample_test" -s "$seconds" "$@" -p $redis
rc=$?
# The benchmark runs a fixed request count; stop it if it outlives the window.
kill $bench 2>/dev/null
wait $bench 2>/dev/null
echo "redis-benchmark (during sampling):"; cat /tmp/redis_bench.$$.log | tr '\r' '\n' | grep -v '^ *$' | grep -v 'rps=' | head -20
rm -f /tmp/redis_test.$$.log /tmp/redis_bench.$$.log
exit $rc
