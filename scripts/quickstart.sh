#!/bin/sh
# Quick start: install what is missing, build, and run the main job of this
# release: profile a live redis-server under redis-benchmark into a model,
# validate it and show it (later releases clone it end to end).
set -eu
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
ditto=build/examples/ditto/ditto
port=$((23000 + $$ % 5000))

redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >build/redis.log 2>&1 &
redis=$!
trap 'kill "$redis" 2>/dev/null; wait "$redis" 2>/dev/null || true' EXIT INT TERM
sleep 0.5
# A bounded load that starts once the window is open.
(sleep 1; redis-benchmark -p "$port" -n 50000 -c 20 -t get,set -q >build/redis-benchmark.log 2>&1) &
bench=$!
set -x
"$ditto" profile --pid "$redis" --duration 5 -o build/redis.msgpack
wait "$bench"
"$ditto" model validate build/redis.msgpack
"$ditto" model show build/redis.msgpack
