#!/bin/sh
# CPU time per front request of each tier of the traced shop at several
# open-loop rates (bench/graph_load_cpu.py). Root; not part of meson test.
#
#   bench/graph-load-cpu.sh [BUILDDIR] [--rates 20,60,100] [--rounds 3] [--seconds 6] [--warm 20] [--clone DIR]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/examples/ditto/ditto" ] || { echo "graph-load-cpu: build $build first" >&2; exit 1; }
DITTO_CLI=$build/examples/ditto/ditto DITTO_LIBRARY=$build/lib/libditto.so.0 \
	PYTHONPATH=bindings/python${PYTHONPATH:+:$PYTHONPATH} exec python3 bench/graph_load_cpu.py "$@"
