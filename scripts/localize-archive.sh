#!/bin/sh
# localize-archive.sh OUT.a STAGE.a...: the installed static library. The
# stages' objects are linked into one relocatable object whose hidden
# symbols (every internal function: lib/ builds with -fvisibility=hidden)
# become local, so that an agent linking libditto.a sees only the API's
# ditto_* names and cannot collide with ours (json_write, proc_new, ...)
# or we with its libraries' (msgpack-c's own namespace included).
set -eu
out=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${LD:-ld}" -r -o "$tmp/libditto.o" --whole-archive "$@" --no-whole-archive
"${OBJCOPY:-objcopy}" --localize-hidden "$tmp/libditto.o"
rm -f "$out"
"${AR:-ar}" rcs "$out" "$tmp/libditto.o"
