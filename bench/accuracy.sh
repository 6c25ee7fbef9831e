#!/bin/sh
# Tuned clones against the Ditto paper's errors (bench/accuracy.py). Root.
#
#   bench/accuracy.sh [BUILDDIR] [redis|memcached|srv_epoll|...]...
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/examples/ditto/ditto" ] || { echo "accuracy: build $build first" >&2; exit 1; }
# memcached raises its open-file limit to its connection limit (1024), which
# valgrind refuses unless the soft limit already is that.
ulimit -Sn 1024
DITTO_CLI=$build/examples/ditto/ditto DITTO_LIBRARY=$build/lib/libditto.so.0 \
	DITTO_SERVERS_DIR=$build/tests/servers \
	PYTHONPATH=bindings/python${PYTHONPATH:+:$PYTHONPATH} exec python3 bench/accuracy.py "$@"
