#!/bin/sh
# CPU profiler benchmarks (bench/cpu_bench.py): stepping speed against
# cachegrind and lackey, redis-server throughput during CPU windows, and
# cachegrind's miss rates of redis next to the predicted ones. Root.
#
#   bench/cpu-bench.sh [BUILDDIR] [stepping|redis|crosscheck]...
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/examples/ditto/ditto" ] || { echo "cpu-bench: build $build first" >&2; exit 1; }
DITTO_BUILD=$build DITTO_LIBRARY=$build/lib/libditto.so.0 \
	PYTHONPATH=bindings/python${PYTHONPATH:+:$PYTHONPATH} exec python3 bench/cpu_bench.py "$@"
