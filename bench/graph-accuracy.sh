#!/bin/sh
# The clone of a graph against its original (bench/graph_accuracy.py):
# per-tier syscalls and bytes per request, edges, end-to-end latency and
# saturation throughput side by side. Root; not part of meson test.
#
#   bench/graph-accuracy.sh [BUILDDIR] [ROUNDS] [SECONDS]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ -x "$build/examples/ditto/ditto" ] || { echo "graph-accuracy: build $build first" >&2; exit 1; }
DITTO_CLI=$build/examples/ditto/ditto DITTO_LIBRARY=$build/lib/libditto.so.0 \
	PYTHONPATH=bindings/python${PYTHONPATH:+:$PYTHONPATH} exec python3 bench/graph_accuracy.py "$@"
