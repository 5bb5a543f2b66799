#!/usr/bin/env bash
# CPU podvisor spends probing: 100 sleep services, each with an http readiness
# probe at interval 1s (all against one small HTTP server run by podvisor
# too), measured over 30 s once everything is ready.
# Usage: bench/probes.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
make -s build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((20000 + RANDOM % 20000))
{ echo "processes:"
  echo "  web: {command: [python3, -m, http.server, '$port', --bind, 127.0.0.1, --directory, '$tmp'], ready: {tcp: '127.0.0.1:$port', start_interval: 20ms}}"
  for i in $(seq 1 100); do
    echo "  s$i: {command: [sleep, '100000'], depends_on: [web], ready: {http: 'http://127.0.0.1:$port/', interval: 1s}}"
  done; } > "$tmp/probes.yaml"
bin/podvisor run -c "$tmp/probes.yaml" --listen off > "$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 1 1000); do grep -q "all processes ready" "$tmp/log" && break; sleep 0.02; done
sleep 2
clk=$(getconf CLK_TCK)
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
sleep "$secs"
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
kill -TERM $pid; wait $pid || true
echo "podvisor CPU over $secs s: $(( (t1 - t0) * 1000 / clk )) ms = $(awk -v c=$((t1 - t0)) -v k="$clk" -v s="$secs" 'BEGIN { printf "%.2f", 100 * c / k / s }') % of one core"
