#!/bin/sh
# The cost of profiling a graph of services and the kernel graph's
# agreement with the shop's construction (bench/graph_profile.py).
#   bench/graph-profile.sh [BUILDDIR] [ROUNDS] [SECONDS] [CONNECTIONS]
set -eu
cd "$(dirname "$0")/.."
exec python3 bench/graph_profile.py "$@"
