#!/usr/bin/env bash
# Idle cost of file watching (issue 26): 100 services, each with watch: on
# its own directory (one inotify instance and watch each), podvisor's CPU and
# context switches (all threads) over SECONDS once ready, with no change.
# Usage: bench/watch.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
make -s build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
switches() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches/ {s += $2} END {print s}'; }
cpu() { awk '{print $14+$15}' /proc/"$1"/stat; }
clk=$(getconf CLK_TCK)
{ echo "processes:"
  for i in $(seq 1 100); do
    mkdir -p "$tmp/d$i"
    echo "  w$i: {command: [sleep, '100000'], watch: {paths: ['$tmp/d$i/*.go']}}"
  done; } > "$tmp/watch.yaml"
bin/podvisor run -c "$tmp/watch.yaml" --listen off > "$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 1 1500); do grep -q "all processes ready" "$tmp/log" && break; sleep 0.02; done
sleep 1
c0=$(cpu $pid); s0=$(switches $pid)
sleep "$secs"
c1=$(cpu $pid); s1=$(switches $pid)
echo "100 watched services (idle): podvisor CPU over $secs s: $(( (c1 - c0) * 1000 / clk )) ms; context switches: $((s1 - s0)); threads: $(ls /proc/$pid/task | wc -l); warnings: $(grep -c 'watch:' "$tmp/log" || true)"
kill -TERM $pid; wait $pid || true
