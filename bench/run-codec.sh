#!/bin/sh
# Build (if needed) and run the codec benchmark.   usage: bench/run-codec.sh [--quick]
set -eu
cd "$(dirname "$0")/.."
build=${BUILD:-build}
[ -d "$build" ] || meson setup "$build" >/dev/null
ninja -C "$build" bench/codec_bench >/dev/null
exec "$build/bench/codec_bench" "$@"
