#!/bin/sh
# Install libditto into a scratch DESTDIR and use it the way a consumer
# would: pkg-config, the shared library (SONAME, exported symbols), a fully
# static link with nothing but `pkg-config --static`, the CLI, the Python
# package from the installed prefix alone, and `pip install` of
# bindings/python. Every version seen must be the project's.
#   usage: install-test.sh BUILDDIR PREFIX LIBDIR VERSION SRCROOT PYTHON STATIC
#                          CONSUMER.c CC [CFLAGS...]
# PYTHON: the interpreter meson installs for ("" skips the Python checks).
# STATIC: "full" links the static consumer with -static; "archive" links
# libditto.a into a dynamic executable (sanitizer builds cannot be -static).
set -eu
build=$1 prefix=$2 libdir=$3 version=$4 src=$5 python=$6 static=$7 consumer=$8 cc=$9
shift 9
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
fail() { echo "install-test: FAIL: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --destdir "$dest" --quiet
case $libdir in /*) lib=$dest$libdir ;; *) lib=$dest$prefix/$libdir ;; esac
for h in ditto model profile synth tune version; do
	[ -f "$dest$prefix/include/ditto/$h.h" ] || fail "include/ditto/$h.h not installed"
done

pc() { PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$lib/pkgconfig pkg-config "$@" libditto; }
[ "$(pc --modversion)" = "$version" ] || fail "pkg-config says version $(pc --modversion), want $version"

# Shared: SONAME, and nothing but ditto_* exported.
soname=$(readelf -d "$lib/libditto.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libditto.so.0 ] || fail "SONAME is '$soname', want libditto.so.0"
others=$(nm -D --defined-only "$lib/libditto.so.0" | awk '$2 != "A" && $3 !~ /^ditto_/')
[ -z "$others" ] || fail "exports non-ditto_ symbols: $others"

# Runs a consumer in a scratch folder; its last line is ditto_version().
run_consumer() {
	out=$(cd "$dest" && "$@") || fail "$1 failed: $out"
	echo "$out"
	[ "$(echo "$out" | tail -n 1)" = "$version" ] ||
		fail "$1: ditto_version() says $(echo "$out" | tail -n 1), want $version"
}

# shellcheck disable=SC2046 # pkg-config output is a list of flags
"$cc" "$@" -o "$dest/consumer" "$consumer" $(pc --cflags --libs)
LD_LIBRARY_PATH=$lib run_consumer "$dest/consumer"
LD_LIBRARY_PATH=$lib ldd "$dest/consumer" | grep -qF "$lib/libditto.so.0" ||
	fail "consumer did not load the installed libditto.so.0"

# Static: libditto.a plus what `pkg-config --static` names must be enough.
if [ "$static" = full ]; then
	# shellcheck disable=SC2046
	"$cc" "$@" -static -o "$dest/consumer-static" "$consumer" $(pc --static --cflags --libs) \
		2>"$dest/static.log" || { cat "$dest/static.log" >&2; fail "static link"; }
	# glibc's warnings about getpwnam & co. in a static program are expected.
	grep -v 'statically linked applications requires at runtime' "$dest/static.log" >&2 || true
	readelf -d "$dest/consumer-static" | grep -q NEEDED && fail "static consumer needs shared libraries"
else
	privlibs=$(pc --static --libs-only-l | tr ' ' '\n' | grep -vx -- -lditto || true)
	# shellcheck disable=SC2046,SC2086
	"$cc" "$@" -o "$dest/consumer-static" "$consumer" $(pc --cflags) "$lib/libditto.a" $privlibs \
		$(pc --static --libs-only-L)
	! readelf -d "$dest/consumer-static" | grep -q 'NEEDED.*libditto' ||
		fail "static consumer still needs libditto.so"
fi
run_consumer "$dest/consumer-static"

# The CLI reports the same version for itself and the library it loaded.
cli=$(LD_LIBRARY_PATH=$lib "$dest$prefix/bin/ditto" --version)
[ "$cli" = "ditto $version (libditto $version)" ] || fail "ditto --version says '$cli'"

[ -n "$python" ] || { echo "install-test: OK without Python (installed to $prefix)"; exit 0; }
"$src/tests/install/python-check.sh" "$dest" "$prefix" "$version" "$src" "$python" "$lib"
echo "install-test: OK (installed to $prefix, libdir $libdir)"
