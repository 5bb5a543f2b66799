#!/usr/bin/env bash
# What observing costs: podvisor supervising 200 processes of a shell and 3
# descendants each (800 processes).
#  - idle: podvisor's context switches (all threads) over IDLE seconds with
#    nobody asking: resources are read only when asked, so there is no poll;
#  - a /metrics scrape that walks /proc (scrapes spaced 1.1 s apart, so none
#    reuses the previous walk): podvisor's CPU per scrape;
#  - scrapes within a second, which reuse one walk: CPU per scrape.
# Usage: bench/observe.sh [IDLE_SECONDS] [SCRAPES]
set -euo pipefail
cd "$(dirname "$0")/.."
idle=${1:-30}
n=${2:-30}
make -s build
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$((20000 + RANDOM % 20000))
{ echo "listen: 127.0.0.1:$port"
  echo "processes:"
  for i in $(seq 1 200); do
    echo "  p$i: {command: 'sleep 100000 & sleep 100000 & sleep 100000 & wait'}"
  done; } > "$tmp/observe.yaml"
bin/podvisor run -c "$tmp/observe.yaml" > "$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 1 1500); do grep -q "all processes ready" "$tmp/log" && break; sleep 0.02; done
# Let the runtime settle after 800 spawns (the Go scavenger returns freed
# memory to the kernel for a few seconds after a burst).
sleep 10
clk=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' /proc/$pid/stat; }
switches() { cat /proc/$pid/task/*/status | awk '/ctxt_switches/ {s += $2} END {print s}'; }
s0=$(switches); c0=$(cpu)
sleep "$idle"
s1=$(switches); c1=$(cpu)
echo "idle $idle s: $((s1 - s0)) context switches (all threads), $(( (c1 - c0) * 1000 / clk )) ms CPU"
members=$(curl -s "127.0.0.1:$port/status" | python3 -c 'import json,sys; print(sum(p["resources"]["processes"] for p in json.load(sys.stdin)["processes"] if p["resources"]))')

c0=$(cpu)
for _ in $(seq 1 "$n"); do curl -s -o /dev/null "127.0.0.1:$port/metrics"; sleep 1.1; done
c1=$(cpu)
echo "scrape with a fresh walk ($members processes counted): $(awk -v c=$((c1 - c0)) -v k="$clk" -v n="$n" 'BEGIN { printf "%.1f", 1000 * c / k / n }') ms CPU per scrape over $n scrapes"

c0=$(cpu)
for _ in $(seq 1 "$n"); do curl -s -o /dev/null "127.0.0.1:$port/metrics"; done
c1=$(cpu)
echo "scrapes within a second (one walk shared): $(awk -v c=$((c1 - c0)) -v k="$clk" -v n="$n" 'BEGIN { printf "%.1f", 1000 * c / k / n }') ms CPU per scrape over $n scrapes"
kill -TERM $pid; wait $pid || true; pid=
