#!/usr/bin/env bash
# HTTP load on a supervising podvisor (FAULTS D12), measured from outside:
#   - podvisor runs 20 services: a python3 web server, 18 sleepers with
#     exec/tcp/file readiness checks that keep probing every second, and a
#     heartbeat child that writes a timestamp to a file (and a line to
#     podvisor's log) every 50 ms;
#   - wrk hammers /readyz and then /metrics on 127.0.0.1 (>= 20,000 requests
#     in total), and the script reports requests, p99 latency and errors;
#   - podvisor's VmRSS is sampled before and after the load;
#   - the heartbeat must show no gap > 200 ms while the load runs, i.e.
#     supervision and log forwarding kept going under HTTP load.
#
# Usage: bench/http_load.sh [SECONDS_PER_ENDPOINT]   (default 5)
# Env:   READYZ_CONNS (default 50), METRICS_CONNS (default 2: the server
#        serves at most 2 scrapes at once and answers 503 beyond that)
# Needs: go, python3, wrk (Debian package wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
readyz_conns=${READYZ_CONNS:-50}
metrics_conns=${METRICS_CONNS:-2}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 2; }
tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# A private build, so the shared bin/podvisor is left alone.
go build -o "$tmp/podvisor" ./cmd/podvisor
bin=$tmp/podvisor

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
webport=$(free_port)
addr=127.0.0.1:$port

{
  echo "listen: \"$addr\""
  echo "shutdown_timeout: 30s"
  echo "processes:"
  echo "  web:"
  echo "    command: [python3, -m, http.server, \"$webport\", --bind, 127.0.0.1, --directory, \"$tmp\"]"
  echo "    ready: {http: \"http://127.0.0.1:$webport/\", start_interval: 100ms, interval: 1s}"
  echo "    live: {tcp: \"127.0.0.1:$webport\", interval: 1s}"
  echo "  heartbeat:"
  echo "    command: [python3, -u, -c, \"import time\\nwhile True:\\n    t = time.time_ns()\\n    open('$tmp/heartbeat', 'a').write(f'{t}\\\\n')\\n    print('beat', t)\\n    time.sleep(0.05)\"]"
  for i in $(seq -w 1 18); do
    echo "  svc$i:"
    echo "    command: [sleep, \"100000\"]"
    case $((10#$i % 3)) in
      0) echo "    ready: {exec: [\"true\"], start_interval: 100ms, interval: 1s}" ;;
      1) echo "    ready: {tcp: \"127.0.0.1:$webport\", start_interval: 100ms, interval: 1s}"
         echo "    depends_on: [web]" ;;
      2) echo "    ready: {file: \"$tmp/heartbeat\", start_interval: 100ms, interval: 1s}"
         echo "    depends_on: [heartbeat]" ;;
    esac
  done
} > "$tmp/procs.yaml"
"$bin" check -c "$tmp/procs.yaml" >/dev/null

"$bin" run -c "$tmp/procs.yaml" > "$tmp/podvisor.log" 2>&1 &
pid=$!
"$bin" wait --ready "$addr" --timeout 30s >/dev/null

rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
threads() { awk '/^Threads/ {print $2}' "/proc/$pid/status"; }
rss0=$(rss)
thr0=$(threads)
t_start=$(date +%s%N)

# run_wrk PATH CONNS: prints "requests p99 socket_errors non_2xx" and keeps
# wrk's report.
run_wrk() {
  local path=$1 conns=$2 out
  out=$tmp/wrk$(echo "$path" | tr / _).txt
  wrk -t2 -c"$conns" -d"${secs}s" --latency "http://$addr$path" > "$out"
  awk '
    / requests in / {req = $1}
    /^ +99%/ {p99 = $2}
    /Socket errors:/ {gsub(",", ""); sock = $4 + $6 + $8 + $10}
    /Non-2xx or 3xx responses:/ {bad = $5}
    END {printf "%d %s %d %d\n", req, p99, sock, bad}' "$out"
}
read -r rq_ready p99_ready sock_ready bad_ready < <(run_wrk /readyz "$readyz_conns")
read -r rq_metrics p99_metrics sock_metrics bad_metrics < <(run_wrk /metrics "$metrics_conns")
err_ready=$((sock_ready + bad_ready))
err_metrics=$((sock_metrics + bad_metrics))

t_end=$(date +%s%N)
rss1=$(rss)
thr1=$(threads)

# Largest gap between heartbeats written during the load.
gap_ms=$(awk -v a="$t_start" -v b="$t_end" '
  $1 >= a && $1 <= b { if (prev) { g = $1 - prev; if (g > max) max = g }; prev = $1; n++ }
  END { printf "%.1f %d\n", max / 1e6, n }' "$tmp/heartbeat")
read -r max_gap beats <<< "$gap_ms"

t0=$(date +%s%N)
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
pid=""

# Every beat the child wrote also reached podvisor's output (the child may die
# between its file write and its print: one line of slack).
written=$(wc -l < "$tmp/heartbeat")
logged=$(grep -c '^heartbeat *| beat ' "$tmp/podvisor.log" || true)

total=$((rq_ready + rq_metrics))
echo "podvisor HTTP load: 20 services, wrk -t2 -d${secs}s per endpoint on $addr"
printf '  /readyz   c=%-3s requests %7d  p99 %8s  socket errors %d  non-2xx %d\n' "$readyz_conns" "$rq_ready" "$p99_ready" "$sock_ready" "$bad_ready"
printf '  /metrics  c=%-3s requests %7d  p99 %8s  socket errors %d  non-2xx %d\n' "$metrics_conns" "$rq_metrics" "$p99_metrics" "$sock_metrics" "$bad_metrics"
echo "  total requests: $total"
echo "  VmRSS: ${rss0} KiB before, ${rss1} KiB after ($(( (rss1 - rss0) / 1024 )) MiB growth); threads $thr0 -> $thr1"
echo "  heartbeat during load: $beats beats, largest gap ${max_gap} ms"
echo "  heartbeat lines: $written written, $logged in podvisor's log"
echo "  SIGTERM after load: exit $code in ${stop_ms} ms"

fail=0
[ "$total" -ge 20000 ] || { echo "FAIL: fewer than 20,000 requests" >&2; fail=1; }
if [ "$err_ready" -ne 0 ] || [ "$err_metrics" -ne 0 ]; then
  echo "FAIL: request errors (a 503 from /readyz means a probe failed under load:)" >&2
  grep -E 'not ready|liveness|failed' "$tmp/podvisor.log" | head -5 >&2 || true
  fail=1
fi
awk -v g="$max_gap" 'BEGIN { exit !(g <= 200) }' || { echo "FAIL: heartbeat gap > 200 ms" >&2; fail=1; }
[ $(( (rss1 - rss0) / 1024 )) -lt 50 ] || { echo "FAIL: RSS grew by 50 MiB or more" >&2; fail=1; }
[ "$code" -eq 0 ] || { echo "FAIL: podvisor exit code $code" >&2; fail=1; }
[ $((written - logged)) -le 1 ] && [ "$logged" -le "$written" ] || { echo "FAIL: heartbeat log lines lost" >&2; fail=1; }
exit $fail
