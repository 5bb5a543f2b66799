#!/usr/bin/env bash
# podvisor side by side with the supervisors a user would pick instead:
# supervisord, s6, tini and dumb-init (Debian packages). Every scenario runs
# on each supervisor ROUNDS times, in a rotating order, and the script prints
# a markdown table: median (min-max) per supervisor and the ratio
# podvisor/peer of the medians (below 1: podvisor is better; lower is better
# in every row). bench/README.md describes each scenario and how it is
# observed; bench/peers/peerbench does the observing.
#
# Usage: bench/peers/run.sh [ROUNDS]        (default 5; needs root for unshare)
# Env:   N=200 services, LINES=1000000 log lines, ORPHANS=1000, CHAIN=10 links,
#        IDLE_SECS=60, IDLE_ROUNDS=ROUNDS (rounds of the idle-CPU window),
#        RAW=FILE keeps the raw figures ("metric supervisor value" lines),
#        SCENARIOS="lifecycle logs zombies chain idle" picks scenarios.
# Peers: apt-get install -y supervisor tini dumb-init s6
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
N=${N:-200}
LINES=${LINES:-1000000}
ORPHANS=${ORPHANS:-1000}
CHAIN=${CHAIN:-10}
IDLE_SECS=${IDLE_SECS:-60}
IDLE_ROUNDS=${IDLE_ROUNDS:-$rounds}
ORPHAN_SECS=1.424242 # also the orphans' marker: "sleep 1.424242"

missing=""
for c in supervisord tini dumb-init s6-svscan s6-log s6-svwait s6-svok s6-svc \
  /usr/lib/execline/bin/execlineb unshare bash awk go; do
  command -v "$c" >/dev/null || missing="$missing $c"
done
if [ -n "$missing" ]; then
  echo "missing:$missing" >&2
  echo "install the peers with: apt-get install -y supervisor tini dumb-init s6" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "run as root: the PID-1 scenario uses unshare --pid" >&2
  exit 2
fi

peers=$PWD/bench/peers
tmp=$(mktemp -d /tmp/podvisor-peers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
raw=$tmp/raw
: > "$raw"

# A private build with the release flags, so the shared bin/podvisor is
# left alone.
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/podvisor" ./cmd/podvisor
go build -o "$tmp/peerbench" ./bench/peers/peerbench
pv=$tmp/podvisor
pb=$tmp/peerbench

# SUPS picks supervisors (bench/compare.sh runs the 1,000-child lifecycle on podvisor and tini only).
read -r -a sups <<< "${SUPS:-podvisor supervisord s6 tini dumb-init}"
# Each supervisor's workload runs under its own marker command line, so
# /proc tells them apart even when they run side by side.
declare -A mark=([podvisor]=1 [supervisord]=2 [s6]=3 [tini]=4 [dumb-init]=5)
marker() { echo "$((99990000 + $1 * 100 + ${mark[$2]}))"; } # marker SCENARIO SUP

note() { echo "$*" >&2; }
record() { echo "$1 $2 $3" >> "$raw"; } # record METRIC SUP VALUE
field() { tr ' ' '\n' <<< "$2" | sed -n "s/^$1=//p"; } # field KEY "k=v k=v"

# ---- configurations ---------------------------------------------------------

# fan_* DIR SECONDS: N independent services running "sleep SECONDS".
fan_podvisor() {
  { echo "processes:"
    for i in $(seq -w 1 "$N"); do echo "  s$i: {command: [sleep, '$2']}"; done
  } > "$1/procs.yaml"
  echo "$pv run -c $1/procs.yaml --listen off"
}
fan_supervisord() {
  mkdir -p "$1/logs"
  { printf '[supervisord]\nnodaemon=true\nuser=root\nlogfile=%s/supervisord.log\npidfile=%s/supervisord.pid\nchildlogdir=%s/logs\n' "$1" "$1" "$1"
    for i in $(seq -w 1 "$N"); do printf '[program:s%s]\ncommand=sleep %s\n' "$i" "$2"; done
  } > "$1/supervisord.conf"
  echo "supervisord -n -c $1/supervisord.conf"
}
fan_s6() {
  for i in $(seq -w 1 "$N"); do
    mkdir -p "$1/scan/s$i"
    printf '#!/usr/lib/execline/bin/execlineb -P\nsleep %s\n' "$2" > "$1/scan/s$i/run"
    chmod +x "$1/scan/s$i/run"
  done
  echo "s6-svscan $1/scan"
}
fan_tini() { echo "tini -s -g -- $peers/many.sh $N sleep $2"; }
fan_dumb-init() { echo "dumb-init $peers/many.sh $N sleep $2"; }

# gen_* DIR: one child printing LINES lines; prints
# "COMMAND<TAB>FILE<TAB>STDOUT": FILE is where the lines end up, STDOUT the
# supervisor's own stdout. For podvisor, tini and dumb-init they are the
# same file; supervisord writes a log file; s6 pipes the child into s6-log,
# which writes a rotated log dir.
gen_podvisor() {
  printf 'processes:\n  gen: {type: job, command: [%s, "%s"]}\n' "$peers/gen.sh" "$LINES" > "$1/procs.yaml"
  printf '%s\t%s\t%s\n' "$pv run -c $1/procs.yaml --listen off" "$1/out" "$1/out"
}
gen_supervisord() {
  printf '[supervisord]\nnodaemon=true\nuser=root\nlogfile=%s/supervisord.log\npidfile=%s/supervisord.pid\n[program:gen]\ncommand=%s %s\nstartsecs=0\nautorestart=false\nstdout_logfile=%s/out\nstdout_logfile_maxbytes=0\n' \
    "$1" "$1" "$peers/gen.sh" "$LINES" "$1" > "$1/supervisord.conf"
  printf '%s\t%s\t%s\n' "supervisord -n -c $1/supervisord.conf" "$1/out" "$1/supervisor.log"
}
gen_s6() {
  mkdir -p "$1/scan/gen/log" "$1/logdir"
  # -O: run once, as the other supervisors do with a job / autorestart=false.
  printf '#!/bin/sh\ns6-svc -O .\nexec %s %s\n' "$peers/gen.sh" "$LINES" > "$1/scan/gen/run"
  printf '#!/bin/sh\nexec s6-log n20 s16777215 %s/logdir\n' "$1" > "$1/scan/gen/log/run"
  chmod +x "$1/scan/gen/run" "$1/scan/gen/log/run"
  printf '%s\t%s\t%s\n' "s6-svscan $1/scan" "$1/logdir/current" "$1/supervisor.log"
}
gen_tini() { printf '%s\t%s\t%s\n' "tini -s -- $peers/gen.sh $LINES" "$1/out" "$1/out"; }
gen_dumb-init() { printf '%s\t%s\t%s\n' "dumb-init $peers/gen.sh $LINES" "$1/out" "$1/out"; }
# The baseline: the child alone, writing straight to a file.
gen_baseline() { printf '%s\t%s\t%s\n' "$peers/gen.sh $LINES" "$1/out" "$1/out"; }

# pid1_* DIR: the supervisor as PID 1, running orphans.sh once.
pid1_podvisor() {
  printf 'processes:\n  orphans: {command: [%s, "%s", %s, "%s", "%s"]}\n' \
    "$peers/orphans.sh" "$ORPHANS" "$1/done" "$ORPHAN_SECS" "$(marker 3 podvisor)" > "$1/procs.yaml"
  echo "$pv run -c $1/procs.yaml --listen off"
}
pid1_supervisord() {
  printf '[supervisord]\nnodaemon=true\nuser=root\nlogfile=%s/supervisord.log\npidfile=%s/supervisord.pid\nchildlogdir=%s\n[program:orphans]\ncommand=%s %s %s %s %s\n' \
    "$1" "$1" "$1" "$peers/orphans.sh" "$ORPHANS" "$1/done" "$ORPHAN_SECS" "$(marker 3 supervisord)" > "$1/supervisord.conf"
  echo "supervisord -n -c $1/supervisord.conf"
}
pid1_s6() {
  mkdir -p "$1/scan/orphans"
  printf '#!/bin/sh\nexec %s %s %s %s %s\n' "$peers/orphans.sh" "$ORPHANS" "$1/done" "$ORPHAN_SECS" "$(marker 3 s6)" > "$1/scan/orphans/run"
  chmod +x "$1/scan/orphans/run"
  echo "s6-svscan $1/scan"
}
pid1_tini() { echo "tini -g -- $peers/orphans.sh $ORPHANS $1/done $ORPHAN_SECS $(marker 3 tini)"; }
pid1_dumb-init() { echo "dumb-init $peers/orphans.sh $ORPHANS $1/done $ORPHAN_SECS $(marker 3 dumb-init)"; }

# chain_* DIR: CHAIN links, each depending on the previous one being ready.
# podvisor: depends_on + notify fd:3. s6 (2.11, no s6-rc in Debian): every
# link is supervised from the start and its run script blocks in
# s6-svwait -U on the previous link (notification-fd 3) before exec'ing.
chain_podvisor() {
  { echo "shutdown_timeout: 30s"
    echo "processes:"
    local prev="" i delay
    for i in $(seq -w 1 "$CHAIN"); do
      delay=""; [ -z "$prev" ] && delay=', "1"'
      echo "  c$i:"
      echo "    command: [$peers/link.sh, c$i, $1/events, \"$(marker 4 podvisor)\"$delay]"
      echo "    ready: {notify: 'fd:3'}"
      echo "    stop: {timeout: 2s}"
      [ -n "$prev" ] && echo "    depends_on: [$prev]"
      prev=c$i
    done
  } > "$1/procs.yaml"
  echo "$pv run -c $1/procs.yaml --listen off"
}
chain_s6() {
  local prev="" i d
  for i in $(seq -w 1 "$CHAIN"); do
    d=$1/scan/c$i
    mkdir -p "$d"
    echo 3 > "$d/notification-fd"
    { echo '#!/bin/sh'
      if [ -n "$prev" ]; then
        # s6-svwait needs the previous link's supervisor to be listening.
        echo "until s6-svok ../$prev; do sleep 0.01; done"
        echo "s6-svwait -U ../$prev || exit 1"
        echo "exec $peers/link.sh c$i $1/events $(marker 4 s6)"
      else
        echo "exec $peers/link.sh c$i $1/events $(marker 4 s6) 1"
      fi
    } > "$d/run"
    chmod +x "$d/run"
    prev=c$i
  done
  echo "s6-svscan $1/scan"
}

# ---- scenarios --------------------------------------------------------------

fresh() { rm -rf "$tmp/run"; mkdir -p "$tmp/run"; echo "$tmp/run"; }

lifecycle() { # lifecycle SUP
  local dir cmd out
  dir=$(fresh)
  cmd=$("fan_$1" "$dir" "$(marker 1 "$1")")
  # shellcheck disable=SC2086 # cmd is a word list built above
  out=$("$pb" lifecycle -n "$N" -marker "sleep $(marker 1 "$1")" -out "$dir/supervisor.log" -- $cmd) || return 1
  record start_ms "$1" "$(field startup_ms "$out")"
  record rss_kib "$1" "$(field rss_kib "$out")"
  record pss_kib "$1" "$(field pss_kib "$out")"
  record teardown_ms "$1" "$(field teardown_ms "$out")"
}

logs() { # logs SUP|baseline
  local dir cmd file stdout out got
  dir=$(fresh)
  IFS=$'\t' read -r cmd file stdout < <("gen_$1" "$dir")
  # shellcheck disable=SC2086
  out=$("$pb" logs -file "$file" -out "$stdout" -- $cmd) || return 1
  # Every line must have arrived, once.
  got=$(cat "$dir"/out "$dir"/logdir/@* "$dir"/logdir/current 2>/dev/null | grep -c '0\{99\}$' || true)
  if [ "$got" -ne "$LINES" ]; then
    note "$1: $got of $LINES log lines arrived"
    return 1
  fi
  record log_ms "$1" "$(field ms "$out")"
  rm -rf "$dir"
}

zombies() { # zombies SUP
  local dir cmd out
  dir=$(fresh)
  cmd=$("pid1_$1" "$dir")
  # shellcheck disable=SC2086
  out=$("$pb" zombies -orphan "sleep $ORPHAN_SECS" -done "$dir/done" -out "$dir/supervisor.log" -- \
    unshare --pid --fork --mount-proc $cmd) || return 1
  record zombies "$1" "$(field zombies "$out")"
  record reap_ms "$1" "$(field clear_ms "$out")"
}

chain() { # chain SUP
  local dir cmd out
  dir=$(fresh)
  cmd=$("chain_$1" "$dir")
  # shellcheck disable=SC2086
  out=$("$pb" chain -n "$CHAIN" -events "$dir/events" -out "$dir/supervisor.log" -- $cmd) || return 1
  record hop_ms "$1" "$(field hop_ms "$out")"
}

idle() { # all supervisors at once, one shared window
  local dir sup sub line
  dir=$(fresh)
  : > "$dir/spec"
  for sup in "${sups[@]}"; do
    sub=$dir/$sup
    mkdir -p "$sub"
    printf '%s\tsleep %s\texec %s\n' "$sup" "$(marker 2 "$sup")" "$("fan_$sup" "$sub" "$(marker 2 "$sup")")" >> "$dir/spec"
  done
  "$pb" idle -n "$N" -window "${IDLE_SECS}s" "$dir/spec" > "$dir/idle" || return 1
  while read -r sup line; do
    record cpu_ms "$sup" "$(field cpu_ms "$line")"
  done < "$dir/idle"
}

# A failed measurement is reported and left out; the run goes on, so one
# flaky peer does not cost a 10-minute run.
failed=0
try() { # try SCENARIO SUP
  if ! "$@"; then
    note "FAILED: $*"
    failed=$((failed + 1))
  fi
}

# ---- run --------------------------------------------------------------------

# SCENARIOS picks scenarios (bench/compare.sh runs only lifecycle and logs).
scenarios=" ${SCENARIOS:-lifecycle logs zombies chain idle} "
has() { [[ "$scenarios" == *" $1 "* ]]; }

load0=$(cut -d' ' -f1-3 /proc/loadavg)
date0=$(date -u '+%Y-%m-%d %H:%M UTC')
t0=$(date +%s)
for r in $(seq 1 "$rounds"); do
  # Rotate the order each round, so no supervisor always goes first.
  order=("${sups[@]:$(((r - 1) % ${#sups[@]}))}" "${sups[@]:0:$(((r - 1) % ${#sups[@]}))}")
  note "round $r/$rounds: ${order[*]}"
  if has lifecycle; then for s in "${order[@]}"; do try lifecycle "$s"; done; fi
  if has logs; then for s in baseline "${order[@]}"; do try logs "$s"; done; fi
  if has zombies; then for s in "${order[@]}"; do try zombies "$s"; done; fi
  if has chain; then for s in "${order[@]}"; do case $s in podvisor | s6) try chain "$s" ;; esac; done; fi
  if has idle && [ "$r" -le "$IDLE_ROUNDS" ]; then try idle; fi
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
[ -n "${RAW:-}" ] && cp "$raw" "$RAW"

# ---- report -----------------------------------------------------------------

ver() { "$@" 2>&1 | head -1; }
echo "Run $date0 on $(nproc) CPUs, Linux $(uname -r); load average $load0 at start, $load1 at end; $(($(date +%s) - t0)) s."
echo "Command: \`bench/peers/run.sh $rounds\` (N=$N LINES=$LINES ORPHANS=$ORPHANS CHAIN=$CHAIN IDLE_SECS=$IDLE_SECS IDLE_ROUNDS=$IDLE_ROUNDS)."
echo "Versions: podvisor $(git describe --tags --always --dirty 2>/dev/null || echo dev); supervisord $(ver supervisord --version); s6 $(dpkg-query -W -f '${Version}' s6 2>/dev/null); $(ver tini --version); $(ver dumb-init --version)."
echo
awk -v N="$N" -v LINES="$LINES" -v ORPHANS="$ORPHANS" -v CHAIN="$CHAIN" -v IDLE="$IDLE_SECS" '
function fmt(v) {
  if (v == int(v) && v < 100000) return sprintf("%d", v)
  if (v >= 100) return sprintf("%.0f", v)
  if (v >= 10) return sprintf("%.1f", v)
  return sprintf("%.2f", v)
}
function stats(m, s,   n, i, j, t, a) {
  n = cnt[m, s]
  if (n == 0) return ""
  for (i = 1; i <= n; i++) a[i] = val[m, s, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  med[m, s] = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  return fmt(med[m, s]) " (" fmt(a[1]) "-" fmt(a[n]) ")"
}
{ cnt[$1, $2]++; val[$1, $2, cnt[$1, $2]] = $3 }
END {
  nsup = split("podvisor supervisord s6 tini dumb-init", sup, " ")
  nrow = split("start_ms rss_kib pss_kib cpu_ms teardown_ms log_ms zombies reap_ms hop_ms", row, " ")
  title["start_ms"] = "time until " N " services run (ms)"
  title["rss_kib"] = "supervisor RSS with " N " children, summed (KiB)"
  title["pss_kib"] = "supervisor PSS with " N " children, summed (KiB)"
  title["cpu_ms"] = "idle CPU over " IDLE " s with " N " children (ms)"
  title["teardown_ms"] = "teardown of " N " processes (ms)"
  title["log_ms"] = LINES " log lines of 100 B (ms)"
  title["zombies"] = "zombies 1 s after " ORPHANS " orphans exit, as PID 1"
  title["reap_ms"] = "time until those zombies are reaped (ms)"
  title["hop_ms"] = "readiness hop over a " CHAIN "-chain (ms)"
  na["hop_ms", "supervisord"] = "cannot express readiness"
  na["hop_ms", "tini"] = "no readiness (one child)"
  na["hop_ms", "dumb-init"] = "no readiness (one child)"
  printf "| scenario |"
  for (i = 1; i <= nsup; i++) printf " %s |", sup[i]
  printf "\n|---|"
  for (i = 1; i <= nsup; i++) printf "---|"
  printf "\n"
  for (r = 1; r <= nrow; r++) {
    m = row[r]
    printf "| %s |", title[m]
    pvcell = stats(m, "podvisor")
    printf " %s |", (pvcell == "" ? "-" : pvcell)
    for (i = 2; i <= nsup; i++) {
      cell = stats(m, sup[i])
      if (cell == "") { printf " %s |", ((m, sup[i]) in na ? na[m, sup[i]] : "-"); continue }
      if (pvcell == "") ratio = ""
      else if (med[m, sup[i]] == 0) ratio = (med[m, "podvisor"] == 0 ? " · =" : " · ∞")
      else ratio = sprintf(" · **%.2f**", med[m, "podvisor"] / med[m, sup[i]])
      printf " %s%s |", cell, ratio
    }
    printf "\n"
  }
  b = stats("log_ms", "baseline")
  if (b != "") printf "\nBaseline for the log row, the child writing straight to a file: %s ms.\n", b
}' "$raw"
echo
echo "Cells: median (min-max) over the rounds; · ratio = podvisor median / peer median (lower is better in every row, so below 1 means podvisor is ahead)."
if [ "$failed" -gt 0 ]; then
  echo
  echo "**$failed measurement(s) failed and are left out; see the FAILED lines on stderr.**"
  exit 1
fi
