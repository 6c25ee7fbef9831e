#!/bin/sh
# Install libditto into a scratch DESTDIR and use it the way a consumer
# would: pkg-config, the shared library (SONAME, exported symbols) and the
# static library.
#   usage: install-test.sh BUILDDIR PREFIX LIBDIR VERSION CONSUMER.c CC [CFLAGS...]
set -eu
build=$1 prefix=$2 libdir=$3 version=$4 consumer=$5 cc=$6
shift 6
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
fail() { echo "install-test: FAIL: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --destdir "$dest" --quiet
case $libdir in /*) lib=$dest$libdir ;; *) lib=$dest$prefix/$libdir ;; esac
for h in ditto model profile synth tune; do
	[ -f "$dest$prefix/include/ditto/$h.h" ] || fail "include/ditto/$h.h not installed"
done

pc() { PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$lib/pkgconfig pkg-config "$@" libditto; }
[ "$(pc --modversion)" = "$version" ] || fail "pkg-config says version $(pc --modversion)"

# Shared: SONAME, and nothing but ditto_* exported.
soname=$(readelf -d "$lib/libditto.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libditto.so.0 ] || fail "SONAME is '$soname', want libditto.so.0"
others=$(nm -D --defined-only "$lib/libditto.so.0" | awk '$2 != "A" && $3 !~ /^ditto_/')
[ -z "$others" ] || fail "exports non-ditto_ symbols: $others"

# shellcheck disable=SC2046 # pkg-config output is a list of flags
"$cc" "$@" -o "$dest/consumer" "$consumer" $(pc --cflags --libs)
LD_LIBRARY_PATH=$lib "$dest/consumer"
LD_LIBRARY_PATH=$lib ldd "$dest/consumer" | grep -qF "$lib/libditto.so.0" ||
	fail "consumer did not load the installed libditto.so.0"

# Static: the archive plus Libs.private must be enough.
privlibs=$(pc --static --libs-only-l | tr ' ' '\n' | grep -vx -- -lditto || true)
# shellcheck disable=SC2046,SC2086
"$cc" "$@" -o "$dest/consumer-static" "$consumer" $(pc --cflags) "$lib/libditto.a" $privlibs
! readelf -d "$dest/consumer-static" | grep -q 'NEEDED.*libditto' ||
	fail "static consumer still needs libditto.so"
"$dest/consumer-static"
echo "install-test: OK (installed to $prefix, libdir $libdir)"
