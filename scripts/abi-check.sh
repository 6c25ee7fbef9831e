#!/bin/sh
# Compare the ABI of the built libditto.so.0 with the committed baseline
# abi/libditto.abi.
#
#   scripts/abi-check.sh [BUILDDIR]           check (default BUILDDIR: build)
#   scripts/abi-check.sh --update [BUILDDIR]  regenerate the baseline
#
# Fails on removed symbols, on changed functions or types, and on an
# exported symbol the baseline lacks: abidiff only checks what the baseline
# holds, so a baseline that lags a release leaves that release unchecked.
# Adding a symbol (in the map's newest node) therefore comes with
# `--update` in the same commit. abi/libditto.abignore allows appending
# members to options structs and ignores the layout of the opaque objects.
set -eu
cd "$(dirname "$0")/.."

update=false
if [ "${1:-}" = --update ]; then
	update=true
	shift
fi
build=${1:-build}
lib=$build/lib/libditto.so.0
baseline=abi/libditto.abi
suppr=abi/libditto.abignore

if [ ! -e "$lib" ]; then
	echo "abi-check: $lib not found: build first (meson setup $build && ninja -C $build)" >&2
	exit 1
fi

# Paths are left out so the baseline does not depend on where it was built.
# --exported-interfaces-only: otherwise libabigail 2.2 may keep the bare
# declaration another file's call emits and drop the definition that
# carries the symbol (ditto_metrics_set, called from counters.c).
dump() {
	abidw --exported-interfaces-only --headers-dir include/ditto --no-corpus-path \
		--no-comp-dir-path --short-locs --out-file "$1" "$lib"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The exported functions (the version-node symbols, type A, are not).
nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$tmp/exported"

# Fails, naming them, when the ABI dump $1 lacks the signature of an
# exported function: abidiff would only notice its removal. gcc's identical
# code folding once hid 18 (lib/meson.build turns it off).
check_signed() {
	sed -n "s/.*elf-symbol-id='\([^@']*\).*/\1/p" "$1" | sort -u >"$tmp/signed"
	blind=$(comm -23 "$tmp/exported" "$tmp/signed")
	[ -z "$blind" ] && return 0
	echo "abi-check: FAIL: $1 has no signature for:" >&2
	echo "$blind" | sed 's/^/  /' >&2
	exit 1
}

if $update; then
	dump "$tmp/new.abi"
	check_signed "$tmp/new.abi"
	cp "$tmp/new.abi" "$baseline"
	echo "abi-check: wrote $baseline"
	exit 0
fi

dump "$tmp/current.abi"

# Every exported symbol, of every node of lib/libditto.map, is in the
# baseline with its signature, and this build's dump has them all too.
sed -n "s/.*<elf-symbol name='\([^']*\)'.*/\1/p" "$baseline" | sort -u >"$tmp/baseline"
unchecked=$(comm -23 "$tmp/exported" "$tmp/baseline")
if [ -n "$unchecked" ]; then
	echo "abi-check: FAIL: exported but not in $baseline, so unchecked:" >&2
	echo "$unchecked" | sed 's/^/  /' >&2
	echo "abi-check: run scripts/abi-check.sh --update with the change that adds them" >&2
	exit 1
fi
check_signed "$baseline"
check_signed "$tmp/current.abi"

# Not --headers-dir1/2: see abi/libditto.abignore.
set -- --suppressions "$suppr" "$baseline" "$tmp/current.abi"
rc=0
abidiff "$@" >"$tmp/report" || rc=$?

# abidiff's exit status is a bit mask: 1 error, 2 usage error, 4 ABI
# change, 8 incompatible ABI change (symbols removed).
if [ $((rc & 3)) -ne 0 ]; then
	cat "$tmp/report" >&2
	echo "abi-check: abidiff failed (status $rc)" >&2
	exit 1
fi
if [ $((rc & 8)) -ne 0 ]; then
	cat "$tmp/report"
	echo "abi-check: FAIL: incompatible ABI change against $baseline" >&2
	exit 1
fi
if [ $((rc & 4)) -ne 0 ]; then
	# A changed function or type is reported like an addition (bit 4);
	# tell them apart by diffing again without the added symbols.
	rc2=0
	abidiff --no-added-syms "$@" >/dev/null || rc2=$?
	cat "$tmp/report"
	if [ "$rc2" -ne 0 ]; then
		echo "abi-check: FAIL: changed functions or types against $baseline" >&2
		exit 1
	fi
	# Every exported symbol is in the baseline (checked above), so what is
	# left is an addition abidiff sees that is no exported symbol.
	echo "abi-check: note: abidiff reports compatible additions"
	exit 0
fi
echo "abi-check: OK: ABI matches $baseline"
