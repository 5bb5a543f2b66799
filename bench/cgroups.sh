#!/bin/sh
# bench/cgroups.sh: the start of N `sleep` processes until /readyz is 200,
# without and with `resources:` in the same run, alternating (BENCHMARKS.md
# section 26). Needs root and a writable cgroup hierarchy for the "with" runs.
#
#   PV=/path/to/podvisor N=1000 ROUNDS=3 bench/cgroups.sh
#
# With OLD=/path/to/an/older/podvisor, each round also runs the older one
# with resources ("old-with"), for a before/after in the same run.
#
# Prints one line per run: "without|with SECONDS cpu CPU_SECONDS", the time
# to /readyz and podvisor's own CPU time (user and system, from
# /proc/PID/stat) until then: where the cgroup work is done, and a figure a
# loaded machine does not inflate the way it does the time. Then whether
# podvisor's cgroups were all removed after each run.
set -eu
PV=${PV:-podvisor}
N=${N:-1000}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18739}
RES=${RES:-'{memory: {max: 64Mi}, cpu: {max: 500m}, pids: {max: 100}}'}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

config() { # $1: "" or the resources line
	{
		echo "shutdown_timeout: 60s"
		echo "processes:"
		i=0
		while [ $i -lt "$N" ]; do
			if [ -n "$1" ]; then
				echo "  p$i: {command: [sleep, '1000'], log: {stdout: off, stderr: off}, resources: $1}"
			else
				echo "  p$i: {command: [sleep, '1000'], log: {stdout: off, stderr: off}}"
			fi
			i=$((i + 1))
		done
	} >"$2"
}
config "" "$dir/without.yaml"
config "$RES" "$dir/with.yaml"

now() { date +%s.%N; }

one() { # $1: without|with, $2: the label (default $1), $3: the binary (default $PV)
	bin=${3:-$PV}
	t0=$(now)
	"$bin" run -c "$dir/$1.yaml" --control off --listen 127.0.0.1:$PORT >"$dir/$1.log" 2>&1 &
	pv=$!
	until curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz"; do
		if ! kill -0 $pv 2>/dev/null; then
			echo "podvisor exited early:" >&2
			tail "$dir/$1.log" >&2
			exit 1
		fi
		sleep 0.01
	done
	t1=$(now)
	cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' /proc/$pv/stat)
	kill -TERM $pv
	wait $pv || true
	echo "${2:-$1} $(echo "$t1 - $t0" | bc) cpu $cpu"
	left=$(find /sys/fs/cgroup -maxdepth 4 -name "podvisor-$pv" 2>/dev/null | wc -l)
	[ "$left" -eq 0 ] || echo "  $left cgroup directories podvisor-$pv left behind"
}

r=0
while [ $r -lt "$ROUNDS" ]; do
	one without
	one with
	[ -z "${OLD:-}" ] || one with old-with "$OLD"
	r=$((r + 1))
done
