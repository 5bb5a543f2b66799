#!/usr/bin/env bash
# Effect-level figures of the real podvisor binary, timed by the children
# themselves (bench/stampchild, a C program built here with cc) and each set
# next to a floor measured in the same round:
#   hop      readiness -> the dependent has exec'd, for log, notify systemd,
#            notify fd (10-chains), against the `started` hop (exec -> exec)
#   stop     ordered stop at the child: previous child's exit -> next child's
#            SIGTERM receipt, for a 10-chain (100 ms exits) and a 200-wide fan-in
#   start    N children all exec'd, against a shell loop starting the same N
#            (N = 200, 1000, 5000); max /livez latency while the 5000 start
#   rss      podvisor's RSS with 200 and 1000 children, KiB per extra child
#   logs     1,000,000 lines of 100 B through podvisor vs. straight to a file;
#            every line must arrive, prefixed
#   probes   CPU of podvisor with 100 http probes at interval 1s (30 s window)
# Usage: bench/effect.sh [ROUNDS]    (as root is not needed; cc is, see deps)
# Env:   PV=path to a podvisor binary (default: a private release build),
#        ONLY="hop stop start rss logs probes" to pick rows, PROBE_SECS=30,
#        PROBE_SERVER=python probes python3's http.server (as bench/probes.sh)
#        instead of stampchild's minimal one.
# Prints "row key=value ..." lines per round, then the medians.
# Sourced with EFFECT_LIB=1 (by bench/compare.sh) it only defines functions.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

effect_setup() { # builds what is missing into $etmp
  etmp=$(mktemp -d /tmp/podvisor-effect.XXXXXX)
  "$root/scripts/deps.sh" gcc python3 curl procps >&2
  if [ -z "${PV:-}" ]; then
    (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$etmp/podvisor" ./cmd/podvisor)
    PV=$etmp/podvisor
  fi
  SC=$etmp/stampchild
  cc -O2 -static -o "$SC" "$here/stampchild/stampchild.c" 2>/dev/null || cc -O2 -o "$SC" "$here/stampchild/stampchild.c"
  cc -O2 -o "$etmp/chainfloor" "$here/stampchild/chainfloor.c"
}

now_ns() { date +%s%N; }

# wait_lines FILE N [SECONDS]: until FILE has N lines. It looks every 50 ms:
# each look forks a wc, and looking every 5 ms took enough CPU from the run
# being timed to slow the single-threaded shell loop by a fifth. The figures
# are the children's own stamps, so a late look costs only wall time.
wait_lines() {
  local i
  for i in $(seq 1 $((${3:-60} * 20))); do
    [ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ] && return 0
    sleep 0.05
  done
  echo "timeout waiting for $2 lines in $1" >&2
  return 1
}

# median of numbers on stdin
med() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# hops FILE KIND: median ms from the previous link's "ready" (KIND=started:
# "exec") to the next link's "exec", links h0..h9.
hops() {
  awk -v k="$2" '{t[$1" "$2]=$3} END {for (i=1;i<10;i++) {a=t["h"(i-1)" "(k=="started"?"exec":"ready")]; b=t["h"i" exec"]; if (a && b) printf "%.4f\n", (b-a)/1e6}}' "$1" | med
}

# run_pv YAML STAMPS N [LISTEN]: run podvisor until N stamp lines, SIGTERM,
# wait. Prints the start instant (ns) on stdout.
run_pv() {
  local t0 pid
  t0=$(now_ns)
  "$PV" run -c "$1" --listen "${4:-off}" > "$etmp/pv.log" 2>&1 &
  pid=$!
  wait_lines "$2" "$3" 120 || { kill -KILL $pid; return 1; }
  kill -TERM $pid
  wait $pid || { echo "podvisor exited $?" >&2; tail -5 "$etmp/pv.log" >&2; return 1; }
  echo "$t0"
}

chain_yaml() { # chain_yaml KIND STAMPS
  local i mode=$1
  [ "$1" = started ] && mode=none
  echo "processes:"
  for i in $(seq 0 9); do
    echo "  h$i:"
    echo "    command: [$SC, $2, h$i, $mode]"
    case $1 in
      log) echo "    ready: {log: '^READY\$'}" ;;
      systemd) echo "    ready: {notify: systemd}" ;;
      fd) echo "    ready: {notify: 'fd:3'}" ;;
    esac
    if [ "$i" -gt 0 ]; then
      if [ "$1" = started ]; then echo "    depends_on: {h$((i - 1)): started}"; else echo "    depends_on: [h$((i - 1))]"; fi
    fi
  done
}

# pv_hop KIND: median hop (ms) of one podvisor 10-chain.
pv_hop() {
  local f=$etmp/hop.$1
  rm -f "$f"
  chain_yaml "$1" "$f" > "$etmp/hop.yaml"
  local n=10
  [ "$1" != started ] && n=20
  run_pv "$etmp/hop.yaml" "$f" "$n" > /dev/null
  hops "$f" "$1"
}

# pv_stop_chain: median step (ms) of a 10-chain, children exit 100 ms after
# SIGTERM: exit of p(i) -> SIGTERM receipt of p(i-1).
pv_stop_chain() {
  local f=$etmp/stop.chain i
  rm -f "$f"
  { echo "processes:"
    for i in $(seq 0 9); do
      echo "  p$i: {command: [$SC, $f, p$i, none, '', '100']$([ "$i" -gt 0 ] && echo ", depends_on: {p$((i - 1)): started}")}"
    done; } > "$etmp/stop.yaml"
  run_pv "$etmp/stop.yaml" "$f" 10 > /dev/null
  chain_steps "$f"
}

# chain_steps FILE: median of p(i) exit -> p(i-1) term, i = 1..9 (ms).
chain_steps() {
  awk '{t[$1" "$2]=$3} END {for (i=1;i<10;i++) printf "%.4f\n", (t["p"(i-1)" term"]-t["p"i" exit"])/1e6}' "$1" | med
}

# chain_floor: the same step with bench/stampchild/chainfloor as the
# supervisor: kill, waitpid, kill, with nothing in between (ms).
chain_floor() {
  local f=$etmp/stop.floor
  rm -f "$f"
  "$etmp/chainfloor" "$SC" "$f" 10 100 200
  chain_steps "$f"
}

# pv_stop_fanin: 200 children depending on one root exit at once on SIGTERM;
# from the last exit to the root's SIGTERM receipt (ms).
pv_stop_fanin() {
  local f=$etmp/stop.fanin i
  rm -f "$f"
  { echo "processes:"
    echo "  root: {command: [$SC, $f, root, none]}"
    for i in $(seq -w 1 200); do echo "  d$i: {command: [$SC, $f, d$i, none], depends_on: {root: started}}"; done; } > "$etmp/fanin.yaml"
  run_pv "$etmp/fanin.yaml" "$f" 201 > /dev/null
  awk '$2=="exit" && $1!="root" {if ($3>last) last=$3} $1=="root" && $2=="term" {term=$3} END {printf "%.4f\n", (term-last)/1e6}' "$f"
}

last_exec() { awk '$2=="exec" {if ($3>m) m=$3} END {print m}' "$1"; }

# shell_start N: ms until N children started by a shell loop have exec'd.
shell_start() {
  local f=$etmp/floor.$1 t0 pid
  rm -f "$f"
  t0=$(now_ns)
  setsid sh -c "i=0; while [ \$i -lt $1 ]; do $SC $f s\$i none & i=\$((i+1)); done; wait" &
  pid=$!
  wait_lines "$f" "$1" 120
  # Only the children are signalled: the shell's `wait` reaps them all
  # before it exits. Killing the shell too would orphan them to PID 1, and
  # their exits (and zombies, if PID 1 reaps slowly) would overlap the next
  # podvisor start and slow it down.
  pkill -TERM -P $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  echo $((($(last_exec "$f") - t0) / 1000)) | awk '{printf "%.1f\n", $1/1000}'
}

# pv_start N [LIVEZ]: ms until N podvisor children have exec'd; with LIVEZ,
# also the largest /livez latency (ms) seen while they start.
pv_start() {
  local f=$etmp/start.$1 i t0 pid port poller=""
  rm -f "$f" "$etmp/livez"
  { echo "shutdown_timeout: 60s"; echo "processes:"
    for i in $(seq 1 "$1"); do echo "  s$i: {command: [$SC, $f, s$i, none]}"; done; } > "$etmp/start.yaml"
  listen=off
  if [ -n "${2:-}" ]; then
    port=$((30000 + RANDOM % 20000))
    listen=127.0.0.1:$port
  fi
  t0=$(now_ns)
  "$PV" run -c "$etmp/start.yaml" --listen "$listen" > "$etmp/pv.log" 2>&1 &
  pid=$!
  if [ -n "${2:-}" ]; then
    python3 - "$port" "$f" "$1" > "$etmp/livez" <<'PY' &
import sys, time, http.client, os
port, f, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
worst, samples, floor = 0.0, 0, 0.0
def lines():
    try:
        with open(f, 'rb') as fh: return fh.read().count(b'\n')
    except FileNotFoundError: return 0
def get(path):
    t = time.monotonic()
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=5)
    c.request('GET', path); c.getresponse().read(); c.close()
    return time.monotonic() - t
# /readyz reads the published snapshot and never waits for the loop: its
# worst latency is the floor (this client and the HTTP server being
# scheduled on a machine busy with the starting children).
while lines() < n:
    try:
        d = get('/livez')
        floor = max(floor, get('/readyz'))
    except OSError:
        time.sleep(0.005); continue
    worst = max(worst, d); samples += 1
    time.sleep(0.01)
print(f"{worst*1000:.1f} {samples} {floor*1000:.1f}")
PY
    poller=$!
  fi
  wait_lines "$f" "$1" 300
  [ -n "$poller" ] && wait "$poller"
  kill -TERM $pid
  wait $pid || true
  echo $((($(last_exec "$f") - t0) / 1000)) | awk '{printf "%.1f\n", $1/1000}'
}

# pv_rss N: podvisor's VmRSS (KiB) 1 s after N children have exec'd.
pv_rss() {
  local f=$etmp/rss.$1 i pid rss
  rm -f "$f"
  { echo "processes:"; for i in $(seq 1 "$1"); do echo "  s$i: {command: [$SC, $f, s$i, none]}"; done; } > "$etmp/rss.yaml"
  "$PV" run -c "$etmp/rss.yaml" --listen off > "$etmp/pv.log" 2>&1 &
  pid=$!
  wait_lines "$f" "$1" 120
  sleep 1
  rss=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
  kill -TERM $pid
  wait $pid || true
  echo "$rss"
}

# logs_ratio: prints "direct_ms podvisor_ms" for 1,000,000 lines of 100 B
# and checks that every line arrived with its prefix.
logs_run() {
  local lines=${LINES:-1000000} t0 t1 t2 n
  local gen="awk 'BEGIN { s = sprintf(\"%099d\", 0); for (i = 0; i < $lines; i++) print s }'"
  printf 'processes:\n  gen:\n    type: job\n    command: |\n      %s\n' "$gen" > "$etmp/logs.yaml"
  t0=$(now_ns); sh -c "$gen" > "$etmp/direct.out"; t1=$(now_ns)
  "$PV" run -c "$etmp/logs.yaml" --listen off > "$etmp/pv.out"; t2=$(now_ns)
  n=$(grep -c '^gen  *| 0\{99\}$' "$etmp/pv.out")
  [ "$n" -eq "$lines" ] || { echo "lost or unprefixed lines: $n of $lines" >&2; return 1; }
  rm -f "$etmp/direct.out" "$etmp/pv.out"
  echo "$(((t1 - t0) / 1000000)) $(((t2 - t1) / 1000000))"
}

# probes_cpu SECS: ms of CPU podvisor uses over SECS with 100 http probes at
# 1s against one stampchild http server (all tasks' schedstat, ns precision).
probes_cpu() {
  local secs=$1 port i pid c0 c1
  port=$((30000 + RANDOM % 20000))
  { echo "processes:"
    if [ "${PROBE_SERVER:-}" = python ]; then # as bench/probes.sh
      echo "  web: {command: [python3, -m, http.server, '$port', --bind, 127.0.0.1, --directory, '$etmp'], ready: {tcp: '127.0.0.1:$port', start_interval: 20ms}}"
    else
      echo "  web: {command: [$SC, $etmp/web.stamps, web, http, '127.0.0.1:$port'], ready: {tcp: '127.0.0.1:$port', start_interval: 20ms}}"
    fi
    for i in $(seq 1 100); do
      echo "  s$i: {command: [sleep, '100000'], depends_on: [web], ready: {http: 'http://127.0.0.1:$port/', interval: 1s}}"
    done; } > "$etmp/probes.yaml"
  "$PV" run -c "$etmp/probes.yaml" --listen off > "$etmp/pv.log" 2>&1 &
  pid=$!
  for i in $(seq 1 1000); do grep -q "all processes ready" "$etmp/pv.log" && break; sleep 0.02; done
  sleep 2
  c0=$(cat /proc/$pid/task/*/schedstat | awk '{s+=$1} END {print s}')
  sleep "$secs"
  c1=$(cat /proc/$pid/task/*/schedstat | awk '{s+=$1} END {print s}')
  kill -TERM $pid
  wait $pid || true
  awk -v a="$c0" -v b="$c1" -v s="$secs" 'BEGIN {printf "%.1f %.2f\n", (b-a)/1e6, 100*(b-a)/1e9/s}'
}

if [ "${EFFECT_LIB:-}" = 1 ]; then return 0; fi

rounds=${1:-3}
only=${ONLY:-hop stop start rss logs probes}
effect_setup
trap 'rm -rf "$etmp"' EXIT
raw=$etmp/raw
want() { [[ " $only " == *" $1 "* ]]; }
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, podvisor $PV"
for r in $(seq 1 "$rounds"); do
  if want hop; then
    s=$(pv_hop started)
    for k in log systemd fd; do
      h=$(pv_hop $k)
      echo "hop $k hop_ms=$h started_ms=$s over_ms=$(awk -v a="$h" -v b="$s" 'BEGIN {printf "%.4f", a-b}')" | tee -a "$raw"
    done
  fi
  if want stop; then
    echo "stop chain10 step_ms=$(pv_stop_chain) floor_ms=$(chain_floor)" | tee -a "$raw"
    echo "stop fanin200 step_ms=$(pv_stop_fanin)" | tee -a "$raw"
  fi
  if want start; then
    for n in 200 1000; do
      fl=$(shell_start $n); pv=$(pv_start $n)
      echo "start $n pv_ms=$pv floor_ms=$fl x=$(awk -v a="$pv" -v b="$fl" 'BEGIN {printf "%.3f", a/b}')" | tee -a "$raw"
    done
    fl=$(shell_start 5000); pv=$(pv_start 5000 livez)
    echo "start 5000 pv_ms=$pv floor_ms=$fl x=$(awk -v a="$pv" -v b="$fl" 'BEGIN {printf "%.3f", a/b}') livez_max_ms=$(cut -d' ' -f1 "$etmp/livez") livez_samples=$(cut -d' ' -f2 "$etmp/livez") readyz_max_ms=$(cut -d' ' -f3 "$etmp/livez")" | tee -a "$raw"
  fi
  if want rss; then
    a=$(pv_rss 200); b=$(pv_rss 1000)
    echo "rss n200_kib=$a n1000_kib=$b per_child_kib=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.1f", (b-a)/800}')" | tee -a "$raw"
  fi
  if want logs; then
    read -r d p < <(logs_run)
    echo "logs direct_ms=$d pv_ms=$p x=$(awk -v a="$p" -v b="$d" 'BEGIN {printf "%.3f", a/b}')" | tee -a "$raw"
  fi
  if want probes; then
    read -r ms pct < <(probes_cpu "${PROBE_SECS:-30}")
    echo "probes cpu_ms=$ms core_pct=$pct" | tee -a "$raw"
  fi
done
echo "# medians over $rounds rounds (load average now $(cut -d' ' -f1-3 /proc/loadavg))"
# For each row and key, the median over rounds.
awk '{row=$1" "$2; if ($1=="rss"||$1=="logs"||$1=="probes") row=$1; for (i=2;i<=NF;i++) if (split($i,kv,"=")==2) {k=row" "kv[1]; n[k]++; v[k,n[k]]=kv[2]; keys[k]=1}}
END {for (k in keys) {m=n[k]; for (i=1;i<=m;i++) a[i]=v[k,i]; for (i=2;i<=m;i++) for (j=i;j>1&&a[j-1]+0>a[j]+0;j--) {t=a[j];a[j]=a[j-1];a[j-1]=t}; printf "%s median=%s min=%s max=%s\n", k, (m%2)?a[(m+1)/2]:(a[m/2]+a[m/2+1])/2, a[1], a[m]}}' "$raw" | sort
