#!/bin/bash
# SPDX-License-Identifier: MIT
# Smoke test of the ground-truth servers: each one starts on a free port,
# answers srv_client (plain, pipelined, and with responses too large for
# one socket buffer), and stops within 5 s of SIGTERM, also while clients
# are still connected, with exit status 0.
#   smoke.sh BUILD_DIR      (the directory holding srv_* and srv_client)
set -u

dir=${1:?usage: smoke.sh BUILD_DIR}
client="$dir/srv_client"
tmp=$(mktemp -d)
pid=
port=
backend_pid=
failures=0

cleanup() {
	# Only the servers this script started, by their PIDs.
	if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null; fi
	if [ -n "$backend_pid" ]; then kill -9 "$backend_pid" 2>/dev/null; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# kill -0 also succeeds on a zombie; a zombie has stopped running.
alive() {
	kill -0 "$1" 2>/dev/null || return 1
	! grep -qs '^[0-9]* (.*) Z' "/proc/$1/stat"
}

# start_server NAME ARGS...: sets pid and port, or returns 1. Ports are
# random in 20000..59999; exit status 3 means the port was taken: retry.
start_server() {
	local name=$1 attempt i rc
	shift
	for attempt in 1 2 3 4 5 6 7 8 9 10; do
		port=$((20000 + RANDOM % 40000))
		# The child truncates out only once it runs: remove the last
		# server's "ready" first or it would be taken for this one's.
		rm -f "$tmp/out"
		"$dir/$name" --port "$port" --max-seconds 30 "$@" >"$tmp/out" 2>"$tmp/err" &
		pid=$!
		for i in $(seq 100); do
			if grep -qsx ready "$tmp/out"; then return 0; fi
			if ! alive "$pid"; then break; fi
			sleep 0.05
		done
		if alive "$pid"; then
			fail "$name: no 'ready' within 5 s"
			kill -9 "$pid"
			wait "$pid" 2>/dev/null
			pid=
			return 1
		fi
		wait "$pid"
		rc=$?
		pid=
		if [ "$rc" -ne 3 ]; then
			fail "$name: exited $rc before ready: $(cat "$tmp/err")"
			return 1
		fi
	done
	fail "$name: no free port in 10 tries"
	return 1
}

# SIGTERM, then up to 5 s for a clean exit; SIGKILL is the last resort.
stop_server() {
	local name=$1 i rc
	kill -TERM "$pid"
	for i in $(seq 100); do
		alive "$pid" || break
		sleep 0.05
	done
	if alive "$pid"; then
		fail "$name: still running 5 s after SIGTERM"
		kill -9 "$pid"
	fi
	wait "$pid"
	rc=$?
	pid=
	[ "$rc" -eq 0 ] || fail "$name: exit status $rc after SIGTERM: $(cat "$tmp/err")"
}

# run_client NAME ARGS...: must succeed and report zero errors.
run_client() {
	local name=$1 out
	shift
	if ! out=$("$client" --port "$port" "$@" 2>"$tmp/cerr"); then
		fail "$name: client $* failed on port $port: $out $(cat "$tmp/cerr")" \
			"server stderr: $(cat "$tmp/err")"
	elif ! grep -q '"errors":0,' <<<"$out"; then
		fail "$name: client output '$out'"
	fi
}

# A paced client still connected when the server is told to stop; its
# own failure is expected and ignored.
stop_while_connected() {
	local name=$1 cpid
	"$client" --port "$port" --connections 2 --requests 1000 --request-bytes 16 \
		--rate 100 --max-seconds 20 "${@:2}" >/dev/null 2>&1 &
	cpid=$!
	sleep 0.2
	stop_server "$name"
	wait "$cpid"
}

check() {
	local name=$1
	shift
	if start_server "$name" "$@"; then
		run_client "$name" --connections 4 --requests 200 --request-bytes 100
		run_client "$name" --connections 2 --requests 200 --request-bytes 3000 --pipeline 8
		stop_while_connected "$name"
	fi
	# Responses larger than a socket buffer: the non-blocking servers
	# must finish partial writes.
	if start_server "$name" --response-bytes 1000000 "$@"; then
		run_client "$name" --connections 2 --requests 20 --request-bytes 10 \
			--pipeline 4 --response-bytes 1000000
		stop_while_connected "$name" --response-bytes 1000000
	fi
}

check srv_blocking
check srv_busypoll
check srv_epoll
check srv_epoll_pool --threads 2
check srv_poll
check srv_select
check srv_prefork --threads 2
check srv_forking

# srv_proxy calls a back end: a srv_blocking of its own, stopped after it.
if start_server srv_blocking; then
	backend_pid=$pid
	backend_port=$port
	pid=
	check srv_proxy --backend "$backend_port"
	pid=$backend_pid
	backend_pid=
	stop_server srv_blocking
fi

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "all servers ok"
