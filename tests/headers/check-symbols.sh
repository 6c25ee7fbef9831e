#!/bin/sh
# The dynamic symbols libditto exports must be exactly the functions the
# public headers declare (scripts/gen-symbol-map.sh) and exactly the names
# lib/libditto.map lists.   usage: check-symbols.sh LIBDITTO.so SRCROOT
set -eu
lib=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Drop the version-node symbol (type A) and the @@LIBDITTO_x suffix.
nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$tmp/exported"
"$src/scripts/gen-symbol-map.sh" >"$tmp/headers"
sed -n 's/^[[:space:]]*\(ditto_[a-z0-9_]*\);.*/\1/p' "$src/lib/libditto.map" | sort -u >"$tmp/map"

rc=0
for want in headers map; do
	if ! diff -u "$tmp/$want" "$tmp/exported" >"$tmp/diff"; then
		echo "exported symbols of $lib differ from $want (- $want only, + exported only):"
		grep '^[-+][a-z_]' "$tmp/diff" || true
		rc=1
	fi
done
[ "$rc" -eq 0 ] && echo "$(wc -l <"$tmp/exported") symbols: exported = headers = map"
exit "$rc"
