#!/bin/sh
# Mutable static storage in libditto: every variable the library's objects
# keep in writable data (.data, .bss, their thread-local kinds .tdata and
# .tbss, and common symbols), whether file-level or function-level, static
# or global, must be listed in scripts/statics-allowed.txt with why it is
# safe when the library is used from several threads (include/ditto/*.h
# promise that distinct objects may be used from distinct threads).
#
#   usage: check-statics.sh BUILD_DIR [ALLOW_LIST]
#
# Reads the symbol tables (nm, System V format for the section) of the
# objects of the static libraries built under BUILD_DIR/lib (today
# BUILD_DIR/lib/libditto.a.p/*.o), not the sources: const data is in
# .rodata or .data.rel.ro (nm's class 'd' covers the latter too, hence the
# section), and a static the code never writes is placed there by gcc at
# -O1 and above. lib/runtime is not library code (it is compiled into the
# clones) and is skipped. Exit 0: every one listed; 1: some are not (they
# are printed); 2: usage or no objects; 77 (meson's skip): no nm.
#
# An allow-list line is "PATH:NAME  # why", PATH relative to the source
# tree; '#' starts a comment, blank lines are ignored. NAME is the
# variable's name (a function-level static's nm name "once.0" is "once").
# Entries that match nothing are reported as stale, as a warning.
set -eu

usage() { echo "usage: $0 BUILD_DIR [ALLOW_LIST]" >&2; exit 2; }
case $# in 1 | 2) ;; *) usage ;; esac
build=$1
src=$(cd "$(dirname "$0")/.." && pwd)
allow=${2:-$src/scripts/statics-allowed.txt}
[ -d "$build/lib" ] || { echo "check-statics: $build/lib: no such directory" >&2; exit 2; }
[ -r "$allow" ] || { echo "check-statics: $allow: cannot read" >&2; exit 2; }
command -v nm >/dev/null 2>&1 || { echo "check-statics: SKIP: no nm (binutils)" >&2; exit 77; }

objs=$(find "$build/lib" -path '*.a.p/*.o' -type f | LC_ALL=C sort)
[ -n "$objs" ] || { echo "check-statics: no objects under $build/lib/*.a.p: build first" >&2; exit 2; }

# The library's C sources, relative to the source tree: an object's name
# is its source's path relative to its target's directory, '/' -> '_'.
sources=$(cd "$src" && find lib -name '*.c' -type f | LC_ALL=C sort)

found=$(
	printf '%s\n' "$objs" | while IFS= read -r o; do
		# BUILD_DIR/lib[/SUB]/TARGET.a.p/NAME.o -> lib[/SUB], NAME
		rel=${o#"$build"/}
		tdir=$(dirname "$(dirname "$rel")")
		printf '@ %s %s\n' "$tdir" "$(basename "$o" .o)"
		nm -f sysv "$o"
	done | LC_ALL=C awk -v sources="$sources" '
	function hex(s,  i, v) {
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
		return v + 0
	}
	BEGIN {
		n = split(sources, src, "\n")
		FS = "|"
	}
	# An object: which source it was compiled from.
	/^@ / {
		split($0, w, " ")
		dir = w[2]; obj = w[3]; path = ""
		if (obj ~ /^meson-generated_/) {
			sub(/^meson-generated_(\.\._)*/, "", obj)
			path = "(generated) " obj
			next
		}
		while (obj ~ /^\.\._/) {	# a source outside the target directory
			sub(/^\.\._/, "", obj)
			sub(/\/[^\/]*$/, "", dir)
		}
		for (i = 1; i <= n; i++) {
			if (index(src[i], dir "/") != 1)
				continue
			m = substr(src[i], length(dir) + 2)
			gsub(/\//, "_", m)
			if (m == obj) {
				path = src[i]
				break
			}
		}
		if (path == "")
			path = dir "/" obj " (source not found)"
		next
	}
	NF >= 7 {
		name = $1; class = $3; type = $4; size = $5; sect = $7
		gsub(/[ \t]/, "", name); gsub(/[ \t]/, "", class); gsub(/[ \t]/, "", type)
		gsub(/[ \t]/, "", size); gsub(/[ \t]/, "", sect)
		if (class !~ /^[bBdDsSgGCvVu]$/ || path ~ /^lib\/runtime\//)
			next
		if (sect ~ /^\.rodata/ || sect ~ /\.rel\.ro/ || sect == "*UND*" || sect == "*ABS*")
			next
		# Local labels, and what sanitizers and coverage add (ASan gives each
		# global a one-byte ODR marker __odr_asan.NAME, gcov counters
		# __gcov0.FUNCTION): not our data.
		if (name ~ /^\.L/ || name ~ /^__(odr_asan|asan|ubsan|sancov|tsan|gcov)/)
			next
		# gcc names a function-level static NAME.N, clang FUNCTION.NAME.
		sub(/\.[0-9]+$/, "", name)
		sub(/^.*\./, "", name)
		kind = class ~ /[a-z]/ ? "static" : "global"
		if (type == "TLS")
			kind = kind ", thread-local"
		printf "%s:%s\t%s, %s, %d bytes\n", path, name, kind, sect, hex(size)
	}' | LC_ALL=C sort -u
)

allowed=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' "$allow" | grep -v '^$' || true)

bad=$(printf '%s\n' "$found" | awk -F'\t' -v allowed="$allowed" '
	BEGIN { n = split(allowed, a, "\n"); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
	NF && !($1 in ok)')
stale=$(printf '%s\n' "$allowed" | awk -F'\t' -v found="$found" '
	BEGIN { n = split(found, f, "\n"); for (i = 1; i <= n; i++) { split(f[i], k, "\t"); seen[k[1]] = 1 } }
	NF && !($0 in seen)')

if [ -n "$stale" ]; then
	echo "check-statics: warning: $allow lists statics the objects do not have (stale?):" >&2
	printf '%s\n' "$stale" | sed 's/^/  /' >&2
fi
if [ -n "$bad" ]; then
	echo "check-statics: mutable statics not in $allow:" >&2
	printf '%s\n' "$bad" | sed 's/^/  /' >&2
	echo "check-statics: make each one per-object or caller-owned state, or, if it is safe from" >&2
	echo "several threads (pthread_once, atomics, thread-local), list it there with why" >&2
	exit 1
fi
echo "check-statics: $(printf '%s\n' "$found" | grep -c .) mutable statics, all listed in $(basename "$allow")"
