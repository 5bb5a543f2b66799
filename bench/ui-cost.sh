#!/bin/sh
# What the event stream and the web page cost podvisor (docs/BENCHMARKS.md,
# "Web page and terminal UI"): VmRSS with 200 processes and nobody watching,
# for this tree and optionally an older binary; and podvisor's CPU over 30 s
# with 200 processes, with no client and with one page open in headless
# Chromium, steady and with 10 of the 200 restarting every ~5 s.
# Usage: bench/ui-cost.sh [OLD_PODVISOR_BINARY]
set -eu
old=${1:-}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
# Built as the Makefile's build target does, so that an old binary built the
# same way compares.
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$dir/podvisor" ./cmd/podvisor
tck=$(getconf CLK_TCK)
port=19480

config() { # $1: churn (0 or 1)
	printf 'listen: "127.0.0.1:%d"\ncontrol: %s/ctl.sock\nprocesses:\n' $port "$dir"
	i=0
	while [ $i -lt 200 ]; do
		if [ "$1" = 1 ] && [ $i -lt 10 ]; then
			printf '  p%03d: {command: "sleep 5; exit 1", restart: {policy: always, backoff: 500ms, max_backoff: 500ms}}\n' $i
		else
			printf '  p%03d: {command: [sleep, "100000"]}\n' $i
		fi
		i=$((i + 1))
	done
}

ticks() { awk '{print $14 + $15}' /proc/"$1"/stat; }

rss() { # $1: binary
	config 0 >"$dir/procs.yaml"
	"$1" run -c "$dir/procs.yaml" >/dev/null 2>&1 &
	pid=$!
	sleep 10
	echo "idle, no client: $(grep VmRSS /proc/$pid/status) ($1)"
	kill $pid
	wait $pid || true
}

cpu() { # $1: churn, $2: page (0 or 1)
	config "$1" >"$dir/procs.yaml"
	"$dir/podvisor" run -c "$dir/procs.yaml" >/dev/null 2>&1 &
	pid=$!
	sleep 5
	cpid=""
	if [ "$2" = 1 ]; then
		chromium --headless --no-sandbox --disable-gpu --remote-debugging-port=0 \
			--user-data-dir="$dir/chrome" "http://127.0.0.1:$port/" >/dev/null 2>&1 &
		cpid=$!
		sleep 5
	fi
	t0=$(ticks $pid)
	sleep 30
	t1=$(ticks $pid)
	echo "churn=$1 page=$2: $((t1 - t0)) ticks in 30 s = $(echo "scale=2; 100 * ($t1 - $t0) / $tck / 30" | bc) % of a core; $(grep VmRSS /proc/$pid/status)"
	[ -n "$cpid" ] && kill $cpid && wait $cpid 2>/dev/null || true
	kill $pid
	wait $pid || true
}

rss "$dir/podvisor"
[ -n "$old" ] && rss "$old"
cpu 0 0
cpu 0 1
cpu 1 0
cpu 1 1
