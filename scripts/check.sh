#!/bin/sh
# The test suite, as CI runs it (.ci/run), in two splits:
#   scripts/check.sh          every meson test suite in a normal build, the
#                             ABI check against the committed baseline, and
#                             each fuzz target for FUZZ_SECONDS (default 30)
#   scripts/check.sh --slow   every meson test suite again under ASan+UBSan
# CI runs both; the first is the one to run after a change (about half of
# the time of the two). Runs every step of its split, prints a summary,
# exits non-zero if any step failed.
set -eu
cd "$(dirname "$0")/.."
split=fast
case ${1:-} in
--slow) split=slow ;;
"") ;;
*)
	echo "usage: scripts/check.sh [--slow]" >&2
	exit 2
	;;
esac
fuzz_secs=${FUZZ_SECONDS:-30}
# Read by the sanitized binaries only: stop at the first UBSan report.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
summary=""
failed=0

step() {
	name=$1
	shift
	echo "==> $name"
	t0=$(date +%s)
	if "$@"; then res=ok; else res=FAILED; failed=1; fi
	summary="$summary$(printf '%-8s %-38s %4ss' "$res" "$name" $(($(date +%s) - t0)))
"
}

# Compiler warnings fail the build step too (the code is warning-free).
# shellcheck disable=SC2317 # called through step()
build_and_test() { # DIR [meson setup options...]
	dir=$1
	shift
	[ -d "$dir" ] || meson setup "$dir" "$@" >/dev/null || return 1
	if ! ninja -C "$dir" >"$dir/ninja.log" 2>&1; then
		tail -n 60 "$dir/ninja.log"
		return 1
	fi
	if grep -q 'warning:' "$dir/ninja.log"; then
		grep -A4 'warning:' "$dir/ninja.log"
		return 1
	fi
	rc=0
	meson test -C "$dir" --print-errorlogs -q || rc=$?
	slowest "$dir"
	return "$rc"
}

# The slowest tests of a run, for keeping the suite within CI's time.
# shellcheck disable=SC2317 # called through build_and_test()
slowest() { # DIR
	python3 - "$1/meson-logs/testlog.json" <<'PY' || true
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows.sort(key=lambda r: -r['duration'])
print('slowest of %d tests (%.0f s in all):' % (len(rows), sum(r['duration'] for r in rows)))
for r in rows[:12]:
    print('  %7.1f s  %s' % (r['duration'], r['name']))
PY
}

step bootstrap scripts/bootstrap.sh
if [ "$split" = slow ]; then
	step "build + test ASan/UBSan (build-asan)" build_and_test build-asan \
		-Db_sanitize=address,undefined -Db_lundef=false
else
	step "build + test (build)" build_and_test build
	step "ABI check (abi/libditto.abi)" scripts/abi-check.sh build
	step "fuzz ${fuzz_secs}s per target (build-fuzz)" scripts/fuzz.sh "$fuzz_secs"
fi

printf '\n%s' "$summary"
[ "$failed" -eq 0 ] && echo "check ($split): all steps passed" || echo "check ($split): FAILED"
exit "$failed"
