#!/bin/sh
# Quick start: install what is missing, build, and run the main job of this
# release: profile a live redis-server under redis-benchmark into a model
# (system calls, threads, network model, then CPU windows on its event
# loop), validate it and show it (later releases clone it end to end).
set -eu
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
ditto=build/examples/ditto/ditto
port=$((23000 + $$ % 5000))

redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >build/redis.log 2>&1 &
redis=$!
bench=
cleanup() {
	if [ -n "$bench" ]; then kill "$bench" 2>/dev/null || true; fi
	kill "$redis" 2>/dev/null || true
	wait "$redis" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
sleep 0.5
# A bounded load (it ends by itself, or is stopped once the profile is
# written) that starts once the window is open and lasts through the CPU
# windows that follow it.
redis-benchmark -p "$port" -n 3000000 -c 20 -t get,set -q >build/redis-benchmark.log 2>&1 &
bench=$!
set -x
"$ditto" profile --pid "$redis" --duration 5 -o build/redis.msgpack
kill "$bench" 2>/dev/null || true
bench=
"$ditto" model validate build/redis.msgpack
"$ditto" model show build/redis.msgpack
