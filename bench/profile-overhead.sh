#!/bin/sh
# What profiling costs the profiled service: redis-server throughput under
# redis-benchmark with no tracer, with `ditto profile` attached and with
# `strace -f -c` attached, measured in one run, rounds interleaved, and
# printed as ratios to the untraced throughput. Needs root.
#
#   bench/profile-overhead.sh [BUILDDIR] [ROUNDS] [REQUESTS]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
requests=${3:-200000}
ditto=$build/examples/ditto/ditto
port=$((22000 + $$ % 5000))
tmp=$(mktemp -d)

redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$tmp/redis.log" 2>&1 &
redis=$!
tracer=
cleanup() {
	[ -n "$tracer" ] && kill -INT "$tracer" 2>/dev/null && wait "$tracer" 2>/dev/null
	kill "$redis" 2>/dev/null || true
	wait "$redis" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
sleep 0.5

# Requests per second of one redis-benchmark run (GET and SET, averaged).
throughput() {
	redis-benchmark -p "$port" -n "$requests" -c 50 -t get,set -q --csv |
		awk -F'","' 'NR > 1 { gsub(/"/, "", $2); s += $2; n++ } END { printf "%.0f\n", s / n }'
}

start_tracer() {
	case $1 in
	none) tracer= ;;
	ditto) "$ditto" profile --pid "$redis" -W 0 -q -o "$tmp/model" & tracer=$! ;;
	ditto-nostacks) "$ditto" profile --pid "$redis" -W 0 -q --sample-hz 0 -o "$tmp/model" & tracer=$! ;;
	strace) strace -f -c -o "$tmp/strace.txt" -p "$redis" 2>/dev/null & tracer=$! ;;
	esac
	[ -n "$tracer" ] && sleep 1
	return 0
}

stop_tracer() {
	[ -n "$tracer" ] && kill -INT "$tracer" && wait "$tracer" || true
	tracer=
}

for round in $(seq "$rounds"); do
	for t in none ditto ditto-nostacks strace; do
		start_tracer "$t"
		echo "$t $(throughput)" >>"$tmp/results"
		stop_tracer
	done
	echo "round $round done" >&2
done

awk -v rounds="$rounds" '
	{ sum[$1] += $2 }
	END {
		base = sum["none"] / rounds
		printf "redis-server, %d rounds, GET+SET (requests/s, mean of rounds)\n", rounds
		printf "  %-22s %10.0f  1.000\n", "no tracer", base
		printf "  %-22s %10.0f  %.3f  (cost %.1f%%)\n", "ditto profile", sum["ditto"] / rounds,
			sum["ditto"] / rounds / base, 100 * (1 - sum["ditto"] / rounds / base)
		printf "  %-22s %10.0f  %.3f  (cost %.1f%%)\n", "  without stacks", sum["ditto-nostacks"] / rounds,
			sum["ditto-nostacks"] / rounds / base, 100 * (1 - sum["ditto-nostacks"] / rounds / base)
		printf "  %-22s %10.0f  %.3f  (cost %.1f%%)\n", "strace -f -c", sum["strace"] / rounds,
			sum["strace"] / rounds / base, 100 * (1 - sum["strace"] / rounds / base)
	}' "$tmp/results"
