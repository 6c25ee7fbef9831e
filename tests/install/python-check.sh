#!/bin/sh
# The Python package, as installed by meson and as installed by pip, imports
# and works with nothing from the source tree on its path: cwd outside the
# tree, PYTHONPATH only into the install, no DITTO_LIBRARY.
#   usage: python-check.sh DESTDIR PREFIX VERSION SRCROOT PYTHON LIBDIR
set -eu
dest=$1 prefix=$2 version=$3 src=$4 python=$5 lib=$6
fail() { echo "install-test: FAIL: python: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

init=$(find "$dest$prefix" -path '*/ditto/__init__.py' | head -n 1)
[ -n "$init" ] || fail "package ditto not installed under $prefix"
pkg=$(dirname "$init")
site=$(dirname "$pkg")

# Every module of the source package is installed (the list cannot lag).
missing=""
for f in "$src"/bindings/python/ditto/*.py; do
	[ -f "$pkg/$(basename "$f")" ] || missing="$missing $(basename "$f")"
done
[ -z "$missing" ] || fail "modules not installed:$missing"

# Imports the package installed in SITE and checks its versions and the
# library it loaded, which must lie under LIBFROM. LDPATH: LD_LIBRARY_PATH,
# else none (meson test sets one into the build tree: it must not count).
#   check_import LIBFROM SITE [LDPATH]
check_import() {
	cd "$work" && env -u DITTO_LIBRARY -u PYTHONHOME -u LD_LIBRARY_PATH PYTHONNOUSERSITE=1 \
		PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$2" ${3:+LD_LIBRARY_PATH=$3} "$python" -c '
import sys, ditto
src, site, want, libfrom = sys.argv[1:5]
for p in sys.path:
    assert not p or not p.startswith(src), "source tree on sys.path: " + p
assert ditto.__file__.startswith(site), ditto.__file__
assert ditto.__version__ == want, (ditto.__version__, want)
assert ditto.version() == want, (ditto.version(), want)
loaded = {l.split()[-1] for l in open("/proc/self/maps") if "libditto.so" in l}
assert len(loaded) == 1 and loaded.pop().startswith(libfrom), loaded
m = ditto.Model()
assert m.meta.tool_version == want, m.meta.tool_version
print("python: ditto %s from %s" % (ditto.__version__, ditto.__file__))
' "$src" "$2" "$version" "$1"
}

check_import "$lib" "$site" || fail "import from the installed prefix"

# pip, offline, with Debian's setuptools, from a copy of bindings/python
# (pip builds in the source folder; the copy keeps the checkout clean).
mkdir -p "$work/src/bindings"
cp "$src/meson.build" "$work/src/"
cp -r "$src/bindings/python" "$work/src/bindings/"
rm -rf "$work/src/bindings/python/build" "$work/src/bindings/python"/*.egg-info
"$python" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-index \
	--target "$work/target" "$work/src/bindings/python" >"$work/pip.log" 2>&1 ||
	{ cat "$work/pip.log" >&2; fail "pip install ./bindings/python"; }
rm -rf "$work/src"
# A pip-installed package finds libditto.so.0 through the dynamic loader.
check_import "$lib" "$work/target" "$lib" ||
	fail "import after pip install --target"
