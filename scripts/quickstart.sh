#!/bin/sh
# Quick start: install what is missing, build, and run the main job: clone a
# live redis-server end to end. redis-server runs under redis-benchmark
# while `ditto clone` profiles it (system calls, threads, network model,
# then CPU windows on its event loop) and writes and builds the clone; then
# `ditto tune` measures a fresh redis-server and the clone under cachegrind
# with one load generator and tunes the clone until they agree; then the
# tuned clone starts and redis-benchmark drives it. The last line is the
# verdict; the exit status is ditto tune's: 0 converged, 3 the clone is out
# of bounds (the verdict says which metric and why), 1 an error.
set -eu
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
ditto=build/examples/ditto/ditto
port=$((23000 + $$ % 5000))
cport=$((port + 1))

redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >build/redis.log 2>&1 &
redis=$!
bench=
clone=
cleanup() {
	for p in $bench $clone $redis; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM
sleep 0.5
# A bounded load (it ends by itself, or is stopped once the clone is built)
# that starts once the window is open and lasts through the CPU windows.
redis-benchmark -p "$port" -n 3000000 -c 20 -t get,set -q >build/redis-benchmark.log 2>&1 &
bench=$!
set -x
"$ditto" clone --pid "$redis" --duration 5 -o build/redis-clone --force
set +x
kill "$bench" "$redis" 2>/dev/null || true
wait "$bench" "$redis" 2>/dev/null || true
bench= redis=
"$ditto" model show build/redis-clone.msgpack
tport=$((port + 2))
set -x
# Exit status 3: the loop ran and the clone is out of bounds; the best
# clone is still built, so it is driven below before the verdict.
tune_rc=0
"$ditto" tune build/redis-clone.msgpack -o build/redis-tuned -i 12 --original-port "$tport" \
	-- redis-server --port "$tport" --bind 127.0.0.1 --save '' --appendonly no \
	>build/redis-tune.txt || tune_rc=$?
set +x
cat build/redis-tune.txt
if [ "$tune_rc" -eq 0 ] || [ "$tune_rc" -eq 3 ]; then
	build/redis-tuned/clone --port "$cport" --max-seconds 120 >build/redis-clone.log 2>&1 &
	clone=$!
	sleep 0.5
	set -x
	redis-benchmark -p "$cport" -n 100000 -c 20 -t get,set -q
	set +x
fi
# One line to end on, from the tuner's own ("verdict: converged in 5
# iterations; ..." or "verdict: NOT converged after 9 iterations:
# i1_miss_rate 30% off (knob ... had no effect ...)").
verdict=$(sed -n 's/^verdict: //p' build/redis-tune.txt | tail -n 1)
case $tune_rc in
0) echo "verdict: clone of redis-server $verdict" ;;
3) echo "verdict: clone of redis-server $verdict" ;;
*) echo "verdict: NOT converged: ditto tune failed (exit status $tune_rc)" ;;
esac
exit "$tune_rc"
