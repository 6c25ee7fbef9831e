#!/bin/sh
# Wall time of building a clone tree with the build's object cache against
# without it, in interleaved rounds (bench/build_cache.py). Not part of
# meson test.
#
#   bench/build-cache.sh [BUILDDIR] [--rounds 5] [--framing resp]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/examples/ditto/ditto" ] || { echo "build-cache: build $build first" >&2; exit 1; }
DITTO_CLI=$build/examples/ditto/ditto DITTO_LIBRARY=$build/lib/libditto.so \
	PYTHONPATH=bindings/python RANDOM_MODEL=$build/tests/synth/random_model \
	exec python3 bench/build_cache.py "$@"
