#!/bin/sh
# The linker version script and the project version must agree, as
# libbpf's build checks libbpf.map against its version: the nodes are
# LIBDITTO_MAJOR.MINOR in ascending order, each inheriting the one before,
# and the newest is the project's MAJOR.MINOR (a release that adds no symbol
# still gets its node, empty). Run by the build (lib/meson.build), so a
# version bump without its node, or a node without the bump, fails there.
#   usage: check-map-version.sh LIBDITTO.MAP VERSION [STAMP]
set -eu
map=$1 version=$2 stamp=${3:-}
fail() { echo "check-map-version: $map: $*" >&2; exit 1; }

case $version in
[0-9]*.[0-9]*.[0-9]*) ;;
*) fail "project version '$version' is not MAJOR.MINOR.PATCH" ;;
esac
want=LIBDITTO_${version%.*}

# Node openings "LIBDITTO_x.y {" and closings "} LIBDITTO_x.y;" in order.
nodes=$(sed -n 's/^\(LIBDITTO_[0-9]*\.[0-9]*\)[[:space:]]*{.*/\1/p' "$map")
parents=$(sed -n 's/^}[[:space:]]*\(LIBDITTO_[0-9.]*\)\{0,1\}[[:space:]]*;.*/\1/p' "$map")
[ -n "$nodes" ] || fail "no LIBDITTO_MAJOR.MINOR node"
[ "$(echo "$nodes" | wc -l)" -eq "$(echo "$parents" | wc -l)" ] ||
	fail "every node must close with '} PARENT;' (or '};' for the first)"

prev="" prevkey=-1 newest=""
for n in $nodes; do
	v=${n#LIBDITTO_}
	key=$(( ${v%.*} * 1000 + ${v#*.} ))
	[ "$key" -gt "$prevkey" ] || fail "node $n is not newer than ${prev:-the one before}"
	parent=$(echo "$parents" | sed -n "$(echo "$nodes" | grep -nx "$n" | cut -d: -f1)p")
	[ "$parent" = "$prev" ] || fail "node $n inherits '${parent:-nothing}', want '${prev:-nothing}'"
	prev=$n prevkey=$key newest=$n
done
[ "$newest" = "$want" ] ||
	fail "newest node is $newest but the project version is $version (want $want): add the node or fix project(version:)"
[ -z "$stamp" ] || echo "$want" >"$stamp"
