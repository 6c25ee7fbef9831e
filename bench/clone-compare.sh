#!/bin/sh
# Original vs. clone side by side (bench/clone_compare.py): model diff and
# cachegrind miss/misprediction rates. Root.
#
#   bench/clone-compare.sh [BUILDDIR] [--keep=DIR] [--tune] [--cachegrind] [redis|memcached|srv_epoll|...]...
#   (--keep=DIR: the models and clone trees stay in DIR)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/examples/ditto/ditto" ] || { echo "clone-compare: build $build first" >&2; exit 1; }
DITTO_CLI=$build/examples/ditto/ditto DITTO_LIBRARY=$build/lib/libditto.so.0 \
	DITTO_SERVERS_DIR=$build/tests/servers \
	PYTHONPATH=bindings/python${PYTHONPATH:+:$PYTHONPATH} exec python3 bench/clone_compare.py "$@"
