#!/usr/bin/env bash
# Idle cost of schedules (issue 26): 100 scheduled oneshots (every: 1h, so
# no tick falls in the window) next to one service, podvisor's CPU and
# context switches (all threads) over SECONDS once ready; then 100 on
# `cron: "* * * * *"` over 60 s (one tick each, 100 runs of `true`).
# Usage: bench/schedule.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
make -s build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
switches() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches/ {s += $2} END {print s}'; }
cpu() { awk '{print $14+$15}' /proc/"$1"/stat; }
clk=$(getconf CLK_TCK)
measure() { # config, seconds, label
  bin/podvisor run -c "$1" --listen off > "$tmp/log" 2>&1 &
  pid=$!
  for _ in $(seq 1 1500); do grep -q "all processes ready" "$tmp/log" && break; sleep 0.02; done
  sleep 1
  c0=$(cpu $pid); s0=$(switches $pid)
  sleep "$2"
  c1=$(cpu $pid); s1=$(switches $pid)
  kill -TERM $pid; wait $pid || true
  echo "$3: podvisor CPU over $2 s: $(( (c1 - c0) * 1000 / clk )) ms; context switches: $((s1 - s0)); runs: $(grep -c 'scheduled run' "$tmp/log" || true)"
}
for kind in every cron; do
  { echo "processes:"
    echo "  app: {command: [sleep, '100000']}"
    for i in $(seq 1 100); do
      if [ $kind = every ]; then
        echo "  s$i: {command: ['true'], type: oneshot, schedule: {every: 1h}}"
      else
        echo "  s$i: {command: ['true'], type: oneshot, schedule: {cron: '* * * * *'}}"
      fi
    done; } > "$tmp/$kind.yaml"
done
measure "$tmp/every.yaml" "$secs" "100 schedules, every: 1h (idle)"
measure "$tmp/cron.yaml" 60 "100 schedules, cron every minute"
