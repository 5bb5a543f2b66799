#!/usr/bin/env bash
# Runtime figures measured from outside on the real binary:
#   - RSS of podvisor with 200 sleep children
#   - CPU podvisor uses over 10 idle seconds with no probes configured
#   - how soon a child ignoring SIGTERM is gone with stop.timeout 2s
#   - log throughput: 1,000,000 lines of 100 bytes through podvisor vs. straight to a file
# Usage: bench/runtime.sh [ROUNDS]   (builds bin/podvisor first)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
make -s build
bin=$PWD/bin/podvisor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clk=$(getconf CLK_TCK)

median() { sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%s (min %s, max %s)\n", m, a[1], a[NR]}'; }

# 200 sleep services depending on one root.
{ echo "processes:"; echo "  root: {command: [sleep, '100000']}"
  for i in $(seq 1 200); do echo "  s$i: {command: [sleep, '100000'], depends_on: [root]}"; done; } > "$tmp/fan.yaml"

wait_ready() { # $1 = log file
  for _ in $(seq 1 2000); do grep -q "all processes ready" "$1" 2>/dev/null && return 0; sleep 0.01; done
  echo "not ready" >&2; return 1
}

echo "== RSS with 200 children, idle CPU over 10 s =="
for r in $(seq 1 "$rounds"); do
  "$bin" run -c "$tmp/fan.yaml" --listen off > "$tmp/fan.log" 2>&1 &
  pid=$!
  wait_ready "$tmp/fan.log"
  sleep 1
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
  t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  sleep 10
  t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  echo "$rss $(( (t1 - t0) * 1000 / clk ))" >> "$tmp/rss"
  kill -TERM $pid; wait $pid || true
done
echo -n "RSS KiB: "; cut -d' ' -f1 "$tmp/rss" | median
echo -n "CPU ms over 10 idle s: "; cut -d' ' -f2 "$tmp/rss" | median

echo "== child ignoring SIGTERM, stop.timeout 2s: SIGTERM to podvisor until the child is gone, and until podvisor exits =="
cat > "$tmp/stubborn.yaml" <<'Y'
processes:
  stubborn:
    command: "trap '' TERM; echo up $$$$; while :; do sleep 1; done"  # $$ is a literal $ in procs.yaml
    stop: {timeout: 2s}
Y
for r in $(seq 1 "$rounds"); do
  "$bin" run -c "$tmp/stubborn.yaml" --listen off > "$tmp/stub.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 500); do grep -q "stubborn | up" "$tmp/stub.log" && break; sleep 0.01; done
  cpid=$(sed -n 's/.*stubborn | up \([0-9]*\).*/\1/p' "$tmp/stub.log")
  t0=$(date +%s%N); kill -TERM $pid
  while kill -0 "$cpid" 2>/dev/null && [ "$(awk '{print $3}' /proc/$cpid/stat 2>/dev/null)" != Z ]; do :; done
  t1=$(date +%s%N)
  wait $pid || true; t2=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000000 )) $(( (t2 - t0) / 1000000 ))" >> "$tmp/stub"
done
echo -n "child gone, ms: "; cut -d' ' -f1 "$tmp/stub" | median
echo -n "podvisor exited, ms: "; cut -d' ' -f2 "$tmp/stub" | median

echo "== log throughput: 1,000,000 lines of 100 bytes =="
gen="awk 'BEGIN { s = sprintf(\"%099d\", 0); for (i = 0; i < 1000000; i++) print s }'"
cat > "$tmp/logs.yaml" <<Y
processes:
  gen:
    type: job
    command: |
      $gen
Y
for r in $(seq 1 "$rounds"); do
  t0=$(date +%s%N); sh -c "$gen" > "$tmp/direct.out"; t1=$(date +%s%N)
  "$bin" run -c "$tmp/logs.yaml" --listen off > "$tmp/pv.out"; t2=$(date +%s%N)
  n=$(grep -c '^gen  *| 0' "$tmp/pv.out")
  [ "$n" -eq 1000000 ] || { echo "lost lines: $n" >&2; exit 1; }
  echo "$(( (t1 - t0) / 1000000 )) $(( (t2 - t1) / 1000000 ))" >> "$tmp/logs"
done
echo -n "direct to file ms: "; cut -d' ' -f1 "$tmp/logs" | median
echo -n "through podvisor ms: "; cut -d' ' -f2 "$tmp/logs" | median
awk '{print $2/$1}' "$tmp/logs" | { echo -n "ratio: "; median; }
