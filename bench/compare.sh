#!/usr/bin/env bash
# podvisor side by side with supervisord, s6, tini and dumb-init, in one run,
# measured at the effect: the rows of the performance issues' tables.
#   - podvisor against its floors (issue 30): exec -> first child exec'd,
#     job exit -> supervisor reaped, `version`, `check` (bench/startup.sh,
#     tini, bench/startup/gofloor (the Go runtime) and a direct start as
#     floors, s6 and supervisord beside them);
#     RSS and threads with 200 and 1,000 children; stop of 200 and 1,000
#     against `tini -g`; the ordered chain step against its C floor
#     (bench/stampchild/chainfloor.c); 1,000,000 log lines
#   - readiness -> dependent exec'd (log line; notify fd), timed by the
#     children themselves (bench/stampchild): podvisor 10-chains, and an s6
#     10-chain whose run scripts wait in s6-svwait -U on the previous link;
#     podvisor's `started` hop in the same round is the floor
#   - 10-chain ordered stop, per step at the child (previous child's exit ->
#     next child's SIGTERM receipt; each child takes 100 ms to exit):
#     podvisor (depends_on) and supervisord (priority order on shutdown)
#   - time until 200 services run, RSS with 200 children, 1,000,000 log
#     lines: bench/peers/run.sh's lifecycle and logs scenarios (see
#     bench/README.md), whose tini column is the shell-loop floor
# process-compose cannot be installed here: its column repeats the figures
# quoted in the issue, labelled as such, not measured by this script.
#
# Usage: bench/compare.sh [ROUNDS]   (as root; default 3 rounds)
# Env:   N, LINES as for bench/peers/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
if [ "$(id -u)" -ne 0 ]; then echo "run as root" >&2; exit 2; fi
./scripts/deps.sh supervisor tini dumb-init s6 execline gcc python3 curl util-linux >&2
EFFECT_LIB=1 source bench/effect.sh
effect_setup
STARTUP_LIB=1 source bench/startup.sh
st_setup
trap 'rm -rf "$etmp" "$st_tmp"' EXIT
raw=$etmp/raw
: > "$raw"
rec() { echo "$1 $2 $3" >> "$raw"; }

# s6_fd_hop: median hop (ms) of an s6 10-chain with notification-fd 3.
s6_fd_hop() {
  local d=$etmp/s6 f=$etmp/s6.stamps i pid
  rm -rf "$d" "$f"
  for i in $(seq 0 9); do
    mkdir -p "$d/h$i"
    echo 3 > "$d/h$i/notification-fd"
    { echo '#!/bin/sh'
      if [ "$i" -gt 0 ]; then
        echo "until s6-svok ../h$((i - 1)); do sleep 0.01; done"
        echo "s6-svwait -U ../h$((i - 1)) || exit 1"
        echo "exec $SC $f h$i fd"
      else
        # The first link waits 1 s, so every waiter is in place.
        echo "STAMPCHILD_DELAY_MS=1000 exec $SC $f h$i fd"
      fi; } > "$d/h$i/run"
    chmod +x "$d/h$i/run"
  done
  setsid s6-svscan "$d" > /dev/null 2>&1 &
  pid=$!
  wait_lines "$f" 20 60
  kill -TERM $pid; wait $pid 2>/dev/null || true
  reap_marked "$f"
  hops "$f" fd
}

# sv_stop_chain: median step (ms) of supervisord stopping a 10-chain in
# priority order.
sv_stop_chain() {
  local d=$etmp/sv f=$etmp/sv.stamps i pid
  rm -rf "$d" "$f"; mkdir -p "$d"
  { printf '[supervisord]\nnodaemon=true\nuser=root\nlogfile=%s/supervisord.log\npidfile=%s/supervisord.pid\nchildlogdir=%s\n' "$d" "$d" "$d"
    for i in $(seq 0 9); do
      printf '[program:p%d]\ncommand=%s %s p%d none "" 100\npriority=%d\nstartsecs=0\nstopwaitsecs=10\n' "$i" "$SC" "$f" "$i" $((i + 1))
    done; } > "$d/supervisord.conf"
  supervisord -n -c "$d/supervisord.conf" > /dev/null 2>&1 &
  pid=$!
  wait_lines "$f" 10 60
  kill -TERM $pid; wait $pid 2>/dev/null || true
  reap_marked "$f"
  awk '{t[$1" "$2]=$3} END {for (i=1;i<10;i++) if (t["p"(i-1)" term"] && t["p"i" exit"]) printf "%.4f\n", (t["p"(i-1)" term"]-t["p"i" exit"])/1e6}' "$f" | med
}

# reap_marked FILE: SIGKILL any stampchild still writing FILE (its unique
# path is on the command line), so no round leaks into the next.
reap_marked() {
  local p
  for p in $(pgrep -f -- "$SC $1 " || true); do kill -KILL "$p" 2>/dev/null || true; done
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
date0=$(date -u '+%Y-%m-%d %H:%M UTC')
run_t0=$(date +%s)  # not t0: effect.sh's functions set that one
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds: effect rows" >&2
  s=$(pv_hop started); rec started podvisor "$s"
  h=$(pv_hop log); rec hop_log podvisor "$h"; rec over_log podvisor "$(awk -v a="$h" -v b="$s" 'BEGIN {print a-b}')"
  h=$(pv_hop fd); rec hop_fd podvisor "$h"; rec over_fd podvisor "$(awk -v a="$h" -v b="$s" 'BEGIN {print a-b}')"
  rec hop_fd s6 "$(s6_fd_hop)"
  rec stop podvisor "$(pv_stop_chain)"
  rec stop supervisord "$(sv_stop_chain)"
  rec stop floor "$(chain_floor)"
  echo "round $r/$rounds: start-up rows" >&2
  st_round rec
done
echo "idle footprint with ${IDLE_N:-200 1000} children" >&2
st_idle_round rec
echo "peers: lifecycle and logs (bench/peers/run.sh $rounds)" >&2
SCENARIOS="lifecycle logs" IDLE_ROUNDS=0 RAW=$etmp/peers.raw bench/peers/run.sh "$rounds" > "$etmp/peers.table" || echo "some peer measurements failed; see above" >&2
[ -f "$etmp/peers.raw" ] && cat "$etmp/peers.raw" >> "$raw"
echo "peers: lifecycle of 1,000 on podvisor and tini" >&2
N=1000 SUPS="podvisor tini" SCENARIOS=lifecycle IDLE_ROUNDS=0 RAW=$etmp/peers1000.raw bench/peers/run.sh "$rounds" > /dev/null || echo "some 1,000-child measurements failed; see above" >&2
[ -f "$etmp/peers1000.raw" ] && awk '{print $1 "_1000", $2, $3}' "$etmp/peers1000.raw" >> "$raw"
load1=$(cut -d' ' -f1-3 /proc/loadavg)

echo "Run $date0 on $(nproc) CPUs, Linux $(uname -r); load average $load0 at start, $load1 at end; $(($(date +%s) - run_t0)) s."
echo "Command: \`bench/compare.sh $rounds\`. podvisor $(git describe --always --dirty 2>/dev/null || echo dev)."
echo
read -r idle_a idle_b _ <<< "${IDLE_N:-200 1000} 1000"
awk -v N="${N:-200}" -v LINES="${LINES:-1000000}" -v A="$idle_a" -v B="$idle_b" '
function f(v) { return (v >= 100) ? sprintf("%.0f", v) : (v >= 10) ? sprintf("%.1f", v) : sprintf("%.2f", v) }
function m(k, s,   n, i, j, t, a) {
  n = cnt[k, s]; if (n == 0) return -1
  for (i = 1; i <= n; i++) a[i] = val[k, s, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  lo[k, s] = a[1]; hi[k, s] = a[n]
  return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function c(k, s,   v) { v = m(k, s); if (v < 0) return "-"; return f(v) ((cnt[k, s] > 1) ? " (" f(lo[k, s]) "-" f(hi[k, s]) ")" : "") }
function x(a, b) { return (a <= 0 || b <= 0) ? "-" : sprintf("%.2fx", a / b) }
function d(a, b) { return (a < 0 || b < 0) ? "-" : sprintf("%+.2f ms", a - b) }
function mb(k) { v = m(k, "podvisor"); return (v < 0) ? "-" : sprintf("%.1f MB", v / 1024) }
{ cnt[$1, $2]++; val[$1, $2, cnt[$1, $2]] = $3 }
END {
  print "Issue 30: podvisor against floors of the same run (ms unless said; median (min-max))"
  print ""
  print "| measured | podvisor | floor in the same run | podvisor / floor | target |"
  print "|---|---|---|---|---|"
  printf "| exec of the supervisor -> first child exec'\''d (one job, `listen: off`, control off) | %s | tini %s; Go floor %s; direct %s; s6 %s; supervisord %s | %s tini | 2x tini |\n", c("start", "podvisor"), c("start", "tini"), c("start", "gofloor"), c("start", "direct"), c("start", "s6"), c("start", "supervisord"), x(m("start", "podvisor"), m("start", "tini"))
  printf "| `podvisor version`, exec -> reaped | %s | `tini --version` %s; `gofloor version` %s | %s | 3 ms |\n", c("version", "podvisor"), c("version", "tini"), c("version", "gofloor"), x(m("version", "podvisor"), m("version", "tini"))
  printf "| `podvisor check` of that file | %s | | | 3 ms |\n", c("check", "podvisor")
  printf "| the job'\''s exit -> the supervisor reaped | %s | tini %s; Go floor %s | %s | tini + 2 ms |\n", c("exit", "podvisor"), c("exit", "tini"), c("exit", "gofloor"), d(m("exit", "podvisor"), m("exit", "tini"))
  printf "| RSS / anonymous / threads with %d children, everything on | %s / %s / %s | tini %s | | 10 MB; 8 threads |\n", A, mb("rss_" A), mb("anon_" A), c("threads_" A, "podvisor"), sprintf("%.1f MB", m("rss_" A, "tini") / 1024)
  r2 = m("rss_" A, "podvisor"); r1 = m("rss_" B, "podvisor")
  printf "| same with %d children | %s / %s / %s; %s KiB per extra child | tini %s | | 8 KiB per child |\n", B, mb("rss_" B), mb("anon_" B), c("threads_" B, "podvisor"), (r1 > 0 && r2 > 0) ? sprintf("%.1f", (r1 - r2) / (B - A)) : "-", sprintf("%.1f MB", m("rss_" B, "tini") / 1024)
  printf "| stop of %d (SIGTERM -> supervisor exit) | %s | tini -g %s | %s | 1.3x |\n", N, c("teardown_ms", "podvisor"), c("teardown_ms", "tini"), x(m("teardown_ms", "podvisor"), m("teardown_ms", "tini"))
  printf "| stop of 1,000 | %s | tini -g %s | %s | 1.3x |\n", c("teardown_ms_1000", "podvisor"), c("teardown_ms_1000", "tini"), x(m("teardown_ms_1000", "podvisor"), m("teardown_ms_1000", "tini"))
  printf "| ordered 10-chain stop, per step | %s | C parent %s; supervisord %s | %s | floor + 0.5 ms |\n", c("stop", "podvisor"), c("stop", "floor"), c("stop", "supervisord"), d(m("stop", "podvisor"), m("stop", "floor"))
  printf "| %d log lines of 100 B | %s | the child writing a file %s | %s | |\n", LINES, c("log_ms", "podvisor"), c("log_ms", "baseline"), x(m("log_ms", "podvisor"), m("log_ms", "baseline"))
  print ""
}' "$raw"
awk -v N="${N:-200}" -v LINES="${LINES:-1000000}" '
function f(v) { return (v >= 100) ? sprintf("%.0f", v) : (v >= 10) ? sprintf("%.1f", v) : sprintf("%.2f", v) }
function st(m, s,   n, i, j, t, a) {
  n = cnt[m, s]; if (n == 0) return ""
  for (i = 1; i <= n; i++) a[i] = val[m, s, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  med[m, s] = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  lo[m, s] = a[1]; hi[m, s] = a[n]
  return f(med[m, s]) ((n > 1) ? " (" f(a[1]) "-" f(a[n]) ")" : "")
}
function cell(m, s, na) { c = st(m, s); return (c == "") ? na : c }
function ratio(s,   c) { if (st("log_ms", s) == "" || st("log_ms", "baseline") == "") return "-"; return sprintf("%.2fx", med["log_ms", s] / med["log_ms", "baseline"]) }
function mb(s) { if (st("rss_kib", s) == "") return "-"; return sprintf("%.1f MB", med["rss_kib", s] / 1024) }
{ cnt[$1, $2]++; val[$1, $2, cnt[$1, $2]] = $3 }
END {
  print "| row (same run, medians, min-max) | podvisor | process-compose (issue figures, not measured here) | supervisord | s6 | tini | dumb-init | floor / target |"
  print "|---|---|---|---|---|---|---|---|"
  printf "| readiness -> dependent exec'\''d, log line (ms) | %s; over `started`: %s | 1.3-1.7 | no readiness | no log readiness | no readiness | no readiness | `started` hop %s; target +0.2 |\n", cell("hop_log", "podvisor", "-"), cell("over_log", "podvisor", "-"), cell("started", "podvisor", "-")
  printf "| same, notify fd (ms) | %s; over `started`: %s | - | no readiness | %s | no readiness | no readiness | target +0.2 |\n", cell("hop_fd", "podvisor", "-"), cell("over_fd", "podvisor", "-"), cell("hop_fd", "s6", "-")
  printf "| 10-chain ordered stop, per step at the child (ms) | %s | 1.4 (opt-in ordering) | %s | no order | no order | no order | target 0.5 |\n", cell("stop", "podvisor", "-"), cell("stop", "supervisord", "-")
  printf "| %d children running (ms) | %s | 263-323 | %s | %s | %s | %s | tini + shell loop |\n", N, cell("start_ms", "podvisor", "-"), cell("start_ms", "supervisord", "-"), cell("start_ms", "s6", "-"), cell("start_ms", "tini", "-"), cell("start_ms", "dumb-init", "-")
  printf "| RSS with %d children (summed over the supervisor'\''s processes) | %s | 61 MB | %s | %s | %s | %s | target 15 MB |\n", N, mb("podvisor"), mb("supervisord"), mb("s6"), mb("tini"), mb("dumb-init")
  printf "| %d log lines x 100 B, vs the child writing to a file | %s | 8.6-9.2x | %s | %s | %s | %s | direct %s ms; target 1.3x |\n", LINES, ratio("podvisor"), ratio("supervisord"), ratio("s6"), ratio("tini"), ratio("dumb-init"), cell("log_ms", "baseline", "-")
}' "$raw"
echo
echo "The peers table of the same run (bench/peers/run.sh, lifecycle and logs only):"
echo
cat "$etmp/peers.table"
