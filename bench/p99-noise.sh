#!/bin/sh
# How far this machine lets a p99 be measured (root not needed):
# stall_meter on every CPU of the idle machine, then one redis-server
# loaded by `ditto load` at a fixed Poisson rate in 1-second rounds, each
# round's p99 printed with the spread over the rounds (max/min and the
# median's distance to the quartiles). The tune report's p99 rows are
# read against this: a bound of 10% means nothing where the same
# service's p99 moves by more from one second to the next.
#   bench/p99-noise.sh [BUILDDIR] [QPS] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
qps=${2:-28000}
rounds=${3:-12}
ditto=$build/examples/ditto/ditto
[ -x "$ditto" ] && [ -x "$build/bench/stall_meter" ] || { echo "p99-noise: build $build first" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "p99-noise: redis-server is not installed" >&2; exit 1; }

echo "== stalls of the idle machine (10 s, every CPU spinning)"
"$build/bench/stall_meter" 10

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do
	"$ditto" load --port "$port" --framing resp -n 1 >/dev/null 2>&1 && break
	sleep 0.1
done
echo "== redis-server at $qps requests/s (Poisson, 16 connections), $rounds rounds of 1 s"
for _ in $(seq "$rounds"); do
	"$ditto" load --port "$port" --framing resp --mode poisson --qps "$qps" -c 16 -d 1 \
		--warmup 0.5 --json
	echo
done | python3 -c '
import json, statistics, sys
p99 = [json.loads(l)["latency_ns"]["p99"] / 1e3 for l in sys.stdin if l.strip()]
print("p99 per round (us):", " ".join("%.0f" % x for x in p99))
q = statistics.quantiles(p99, n=4)
med = statistics.median(p99)
print("median %.0f us, quartiles %.0f-%.0f us (%+.0f%% / %+.0f%%), max/min %.1f" %
      (med, q[0], q[2], 100 * (q[0] / med - 1), 100 * (q[2] / med - 1), max(p99) / min(p99)))'
