#!/usr/bin/env bash
# The sd_notify watchdog (issue 26), with a small C child that speaks it:
# 1. detection latency: children ping WATCHDOG=1 three times (every half
#    interval) then hang; each records how long after its deadline (last
#    ping + WATCHDOG_USEC) SIGTERM arrived. 20 samples, watchdog 500ms.
# 2. idle cost: 100 services pinging (watchdog 2s, a ping a second each)
#    against 100 plain services, podvisor's CPU and wake-ups (context
#    switches of all its threads) over SECONDS.
# Usage: bench/watchdog.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
make -s build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/wd.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
static struct timespec last; static long usec; static const char *out;
static double since(struct timespec a) { struct timespec b; clock_gettime(CLOCK_MONOTONIC, &b);
  return (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3; }
static void term(int s) { (void)s; FILE *f = fopen(out, "a");
  if (f) { fprintf(f, "%.0f\n", since(last) - usec); fclose(f); } _exit(0); }
int main(int argc, char **argv) {
  int pings = atoi(argv[1]); out = argv[2]; usec = atol(getenv("WATCHDOG_USEC"));
  signal(SIGTERM, term);
  struct sockaddr_un a = {.sun_family = AF_UNIX}; strncpy(a.sun_path, getenv("NOTIFY_SOCKET"), sizeof a.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0); connect(fd, (struct sockaddr *)&a, sizeof a);
  send(fd, "READY=1", 7, 0); clock_gettime(CLOCK_MONOTONIC, &last);
  for (int i = 0; pings < 0 || i < pings; i++) {
    send(fd, "WATCHDOG=1", 10, 0); clock_gettime(CLOCK_MONOTONIC, &last); usleep(usec / 2); }
  for (;;) pause();
}
C
gcc -O2 -o "$tmp/wd" "$tmp/wd.c"
run() { # config, then waits for readiness; sets pid
  bin/podvisor run -c "$1" --listen off > "$tmp/log" 2>&1 &
  pid=$!
  for _ in $(seq 1 1500); do grep -q "all processes ready" "$tmp/log" && break; sleep 0.02; done
}
stopit() { kill -TERM "$pid"; wait "$pid" || true; }
switches() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches/ {s += $2} END {print s}'; }
cpu() { awk '{print $14+$15}' /proc/"$1"/stat; }

echo "== detection latency (watchdog 500ms, 20 samples)"
{ echo "processes:"
  echo "  hang: {command: ['$tmp/wd', '3', '$tmp/late'], ready: {notify: systemd}, watchdog: 500ms, restart: {policy: always, backoff: 100ms, max_backoff: 100ms}}"
} > "$tmp/lat.yaml"
run "$tmp/lat.yaml"
for _ in $(seq 1 600); do [ -f "$tmp/late" ] && [ "$(wc -l < "$tmp/late")" -ge 20 ] && break; sleep 0.1; done
stopit
sort -n "$tmp/late" | head -20 | awk '{a[NR]=$1} END {printf "deadline to SIGTERM at the child, µs: min %d, median %d, p90 %d, max %d (n=%d)\n", a[1], a[int(NR/2)+1], a[int(NR*0.9)], a[NR], NR}'

clk=$(getconf CLK_TCK)
for mode in plain watchdog; do
  { echo "processes:"
    for i in $(seq 1 100); do
      if [ $mode = watchdog ]; then
        echo "  w$i: {command: ['$tmp/wd', '-1', '/dev/null'], ready: {notify: systemd}, watchdog: 2s}"
      else
        echo "  w$i: {command: [sleep, '100000']}"
      fi
    done; } > "$tmp/$mode.yaml"
  run "$tmp/$mode.yaml"
  sleep 2
  c0=$(cpu $pid); s0=$(switches $pid)
  sleep "$secs"
  c1=$(cpu $pid); s1=$(switches $pid)
  stopit
  echo "== 100 services, $mode: podvisor CPU over $secs s: $(( (c1 - c0) * 1000 / clk )) ms; context switches: $((s1 - s0))"
done
