#!/bin/sh
# Build the libFuzzer targets (clang, build-fuzz/) and run each for SECONDS
# (default 60) over a scratch copy of its committed corpus, in parallel.
# Fails on any crash, leak, timeout or out-of-memory; the input that caused
# it is saved as tests/fuzz/{crash,leak,timeout,oom}-<sha1> (git-ignored).
#   usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   (targets: model_decode hist synth_generate synth_names graph_manifest cg_parse load_response
#    otlp_json jaeger_json zipkin_json otlp_proto http_head rt_mysql rt_up_reply)
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-model_decode hist synth_generate synth_names graph_manifest cg_parse load_response otlp_json jaeger_json zipkin_json otlp_proto http_head rt_mysql rt_up_reply}
build=${FUZZ_BUILD:-build-fuzz}

[ -d "$build" ] || CC=clang meson setup "$build" -Dfuzz=true >/dev/null
exes=""
for t in $targets; do exes="$exes tests/fuzz/fuzz_$t"; done
# shellcheck disable=SC2086
if ! ninja -C "$build" $exes >"$build/fuzz-ninja.log" 2>&1; then
	tail -n 60 "$build/fuzz-ninja.log"
	exit 1
fi
if grep -A4 'warning:' "$build/fuzz-ninja.log"; then
	echo "fuzz: clang warnings in the build (see above)"
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in $targets; do
	mkdir -p "$tmp/$t"
	cp tests/fuzz/corpus/"$t"/* "$tmp/$t/"
	# -timeout catches hangs: the synthesizer's largest bodies (256 code
	# chunks, 550k lines) take about 7 s under this instrumentation
	# alone, and the targets share the CPUs.
	"$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=60 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix=tests/fuzz/ \
		"$tmp/$t" >"$tmp/$t.log" 2>&1 &
	echo $! >"$tmp/$t.pid"
done

rc=0
for t in $targets; do
	if wait "$(cat "$tmp/$t.pid")"; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$t.log")
		echo "fuzz: $t: OK, ${runs:-?} runs in ${secs}s"
	else
		tail -n 40 "$tmp/$t.log"
		echo "fuzz: $t: FAILED; reproduce: $build/tests/fuzz/fuzz_$t <saved input above>"
		rc=1
	fi
done
exit "$rc"
