#!/bin/sh
# Print the exported function names declared with DITTO_API in the public
# headers, one per line, sorted: the set lib/libditto.map must export.
cd "$(dirname "$0")/.." || exit 1
sed -n 's/^DITTO_API[^(]*[ *]\(ditto_[a-z0-9_]*\)(.*/\1/p' include/ditto/*.h | sort -u
