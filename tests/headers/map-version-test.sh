#!/bin/sh
# scripts/check-map-version.sh, which the build runs on lib/libditto.map,
# accepts the real map at the project version and refuses a map and a
# version that disagree.   usage: map-version-test.sh SRCROOT VERSION
set -eu
src=$1 version=$2
check=$src/scripts/check-map-version.sh
map=$src/lib/libditto.map
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "map-version-test: FAIL: $*" >&2; exit 1; }
refuses() { ! "$check" "$@" 2>/dev/null; }

"$check" "$map" "$version" || fail "the real map at $version"

major=${version%%.*} rest=${version#*.}
minor=${rest%%.*}
refuses "$map" "$major.$((minor + 1)).0" || fail "a version bump without its node passed"
[ "$minor" -eq 0 ] || refuses "$map" "$major.$((minor - 1)).0" || fail "a node newer than the version passed"

# A new node that forgets to inherit the one before.
cp "$map" "$tmp/orphan.map"
printf '\nLIBDITTO_%s.%s {\n} LIBDITTO_0.1;\n' "$major" "$((minor + 1))" >>"$tmp/orphan.map"
refuses "$tmp/orphan.map" "$major.$((minor + 1)).0" || fail "a node inheriting the wrong parent passed"
echo "map-version-test: OK"
