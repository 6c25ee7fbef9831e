#!/bin/sh
# Quick start: install what is missing, build, and run the main job of this
# release: write a sample model, validate it and show it.
set -eu
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
ditto=build/examples/ditto/ditto
set -x
"$ditto" model sample -o build/sample.msgpack
"$ditto" model validate build/sample.msgpack
"$ditto" model show build/sample.msgpack
