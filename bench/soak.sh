#!/usr/bin/env bash
# Soak test (FAULTS §3, issue 7): podvisor supervising 50 processes for
# DURATION — crash-looping services restarting with backoff, services with
# http, tcp and exec readiness/liveness probes, log flooders, oneshots and
# services gated on them — while podvisor's VmRSS, open fds, threads and the
# zombies below it are sampled every INTERVAL seconds into a CSV.
#
# Fails (exit 1) when, after a warm-up, the RSS peak grows by more than
# 25% + 4 MiB or the median fd or thread count by more than 8 (first half
# against second half), a zombie survives a second look, podvisor logs an
# ERROR, it dies, or it does not exit 0 on SIGTERM at the end.
#
# Usage: bench/soak.sh [DURATION] [OUTDIR]
#   DURATION: 90s, 10m, 1h (default 1h); OUTDIR keeps soak.csv, podvisor.log
#   (its own lines) and procs.yaml (default: a temporary directory).
# `make soak` runs 1h; `make soak-short` runs 3m (for CI).
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${1:-1h}
case "$dur" in
*h) secs=$((${dur%h} * 3600)) ;;
*m) secs=$((${dur%m} * 60)) ;;
*s) secs=${dur%s} ;;
*) secs=$dur ;;
esac
interval=${SOAK_INTERVAL:-10}
if [ "$secs" -lt 60 ]; then
	echo "soak: DURATION must be at least 60s" >&2
	exit 2
fi
if [ "$secs" -lt 600 ]; then interval=${SOAK_INTERVAL:-5}; fi

out=${2:-}
tmp=$(mktemp -d)
if [ -z "$out" ]; then out=$tmp; fi
mkdir -p "$out"
pv=""
cleanup() {
	if [ -n "$pv" ] && kill -0 "$pv" 2>/dev/null; then kill -KILL "$pv" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/podvisor" ./cmd/podvisor
bin=$tmp/podvisor
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 19464)
addr=127.0.0.1:$port

# 50 processes: 12 crash loops, 8 http-probed, 8 tcp-probed, 8 exec-probed,
# 4 log flooders, 5 oneshots and 5 services gated on them.
cfg=$out/procs.yaml
{
	echo "shutdown_timeout: 20s"
	echo "processes:"
	for i in $(seq 1 12); do
		cat <<-EOF
		  crash$i:
		    command: 'sleep 0.\$\$((\$\$\$\$ % 9 + 1)); exit \$\$((\$\$\$\$ % 3 + 1))'
		    restart: {policy: always, backoff: 200ms, max_backoff: 3s}
		EOF
	done
	for i in $(seq 1 8); do
		cat <<-EOF
		  http$i:
		    command: ['sleep', '1000000']
		    ready: {http: 'http://$addr/livez', start_interval: 200ms}
		    live: {http: 'http://$addr/livez', interval: 1s, timeout: 2s}
		EOF
	done
	for i in $(seq 1 8); do
		cat <<-EOF
		  tcp$i:
		    command: ['sleep', '1000000']
		    ready: {tcp: '$addr', start_interval: 200ms}
		    live: {tcp: '$addr', interval: 1s}
		EOF
	done
	for i in $(seq 1 8); do
		cat <<-EOF
		  exec$i:
		    command: ['sleep', '1000000']
		    ready: {exec: ['true'], start_interval: 200ms}
		    live: {exec: 'test -d /proc/self', interval: 1s}
		EOF
	done
	for i in $(seq 1 4); do
		cat <<-EOF
		  flood$i:
		    command: 'while :; do seq -f "flood$i line %.0f of a log burst" 1 5000; echo "err$i" >&2; sleep 1; done'
		EOF
	done
	for i in $(seq 1 5); do
		cat <<-EOF
		  init$i:
		    type: oneshot
		    command: 'sleep 0.$i'
		  app$i:
		    command: 'echo up; exec sleep 1000000'
		    depends_on: {init$i: completed}
		    ready: {log: '^up\$\$'}
		EOF
	done
} >"$cfg"
"$bin" check -c "$cfg" >/dev/null

# podvisor's stdout carries the floods: keep only its own lines.
csv=$out/soak.csv
own=$out/podvisor.log
"$bin" run -c "$cfg" --listen "$addr" --log-format json > >(grep --line-buffered '"process":"podvisor"' >"$own") 2>&1 &
pv=$!
echo "soak: podvisor pid $pv, $addr, ${secs}s, sample every ${interval}s, output in $out"

zombies() { # zombies among podvisor's descendants that are still zombies a second later
	local z
	z=$(ps -e -o pid=,ppid=,stat= | awk -v p="$pv" '$2 == p && $3 ~ /^Z/ {print $1}')
	[ -z "$z" ] && { echo 0; return; }
	sleep 1
	ps -e -o pid=,ppid=,stat= | awk -v p="$pv" -v list=" $(echo $z) " '$2 == p && $3 ~ /^Z/ && index(list, " " $1 " ") {n++} END {print n + 0}'
}
restarts() {
	curl -s --max-time 5 "http://$addr/metrics" | awk '/^podvisor_process_restarts_total/ {s += $2} END {print s + 0}'
}
field() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pv/status"; }

echo "t_s,rss_kib,fds,threads,zombies,restarts,errors" >"$csv"
start=$(date +%s)
fail=0
while :; do
	now=$(($(date +%s) - start))
	if ! kill -0 "$pv" 2>/dev/null; then
		echo "soak: FAIL podvisor died at ${now}s" >&2
		fail=1
		break
	fi
	z=$(zombies)
	errors=$(grep -c '"level":"ERROR"' "$own" || true)
	echo "$now,$(field VmRSS),$(ls "/proc/$pv/fd" | wc -l),$(field Threads),$z,$(restarts),$errors" >>"$csv"
	if [ "$z" -gt 0 ]; then
		echo "soak: FAIL $z zombie(s) at ${now}s" >&2
		fail=1
	fi
	[ "$now" -ge "$secs" ] && break
	sleep "$interval"
done

# SIGTERM: a clean teardown of everything.
code=0
if kill -0 "$pv" 2>/dev/null; then
	t0=$(date +%s%N)
	kill -TERM "$pv"
	wait "$pv" || code=$?
	stop_ms=$((($(date +%s%N) - t0) / 1000000))
	pv=""
	echo "soak: SIGTERM -> exit $code in ${stop_ms} ms"
	if [ "$code" -ne 0 ]; then
		echo "soak: FAIL exit code $code after SIGTERM" >&2
		fail=1
	fi
fi

# Growth: warm-up is the first quarter (at least 30 s); the samples after it
# are split in halves and compared.
python3 - "$csv" "$secs" <<'PY' || fail=1
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
secs = int(sys.argv[2])
warm = max(30, secs // 4)
rows = [r for r in rows if int(r["t_s"]) >= warm]
if len(rows) < 2:
    print("soak: too few samples after warm-up"); sys.exit(1)
def col(k, rs): return [int(r[k]) for r in rs]
half = len(rows) // 2
early, late = rows[:max(1, half)], rows[half:]
bad = []
r0, r1 = max(col("rss_kib", early)), max(col("rss_kib", late))
if r1 > r0 * 1.25 + 4096: bad.append(f"RSS grew {r0} -> {r1} KiB")
# fds and threads move with the children alive at the moment (each holds
# pipes and a pidfd): compare medians, which a leak shifts and noise does not.
def median(xs): return sorted(xs)[len(xs) // 2]
for k in ("fds", "threads"):
    a, b = median(col(k, early)), median(col(k, late))
    if b > a + 8: bad.append(f"{k} median grew {a} -> {b}")
last = rows[-1]
if int(last["errors"]) > 0: bad.append(f"{last['errors']} ERROR lines from podvisor")
print(f"soak: {len(rows)} samples after {warm}s warm-up; RSS peak {r0} -> {r1} KiB; "
      f"fds {min(col('fds', rows))}-{max(col('fds', rows))}; threads {min(col('threads', rows))}-{max(col('threads', rows))}; "
      f"restarts {last['restarts']}; zombies max {max(col('zombies', rows))}; errors {last['errors']}")
for b in bad: print("soak: FAIL", b)
sys.exit(1 if bad else 0)
PY

if [ "$out" = "$tmp" ]; then cat "$csv"; fi
if [ "$fail" -ne 0 ]; then
	echo "soak: FAILED" >&2
	exit 1
fi
echo "soak: PASSED"
