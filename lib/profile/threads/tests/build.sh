#!/bin/sh
# Build the thread-sampler tests outside meson: build.sh OUTDIR [extra CFLAGS...]
# Gives OUTDIR/ted_test, OUTDIR/sample_test, OUTDIR/spin_target (and a stripped copy).
set -eu
out=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
root=$(cd "$src/../../.." && pwd)
mkdir -p "$out"
cflags="-std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -fno-strict-aliasing -I$root/include -I$root/lib/core -I$src $*"
# remote unwinding lives in libunwind-x86_64, pkg-config name libunwind-generic
libs="$(pkg-config --libs libunwind-generic libelf) -lm"
objs=
for f in "$src"/*.c "$root"/lib/core/*.c; do
	o="$out/$(basename "$f" .c).o"
	gcc $cflags -fvisibility=hidden -DDITTO_BUILDING -c "$f" -o "$o"
	objs="$objs $o"
done
gcc $cflags "$here/ted_test.c" $objs -o "$out/ted_test" $libs
gcc $cflags "$here/sample_test.c" $objs -o "$out/sample_test" $libs
# The target is built like production code: -O2, no frame pointers.
gcc -O2 -fomit-frame-pointer -pthread "$here/spin_target.c" -o "$out/spin_target"
strip -o "$out/spin_target.stripped" "$out/spin_target"
