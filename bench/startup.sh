#!/usr/bin/env bash
# Issue 30: podvisor's own start-up, exit and footprint, each against a floor
# measured in the same round. Every instant is stamped by a process with its
# own clock (bench/startup/launch.c: CLOCK_REALTIME, one write(2) each):
#   start    exec of the supervisor -> its first child has exec'd; one job,
#            `listen: off`, `control: off`; floors: `tini -s --` with the
#            same child, the child started directly (fork and exec of
#            the launcher alone), and bench/startup/gofloor (a Go program
#            that only forks, execs and waits: the Go runtime's floor); peers: s6-svscan (one service) and
#            supervisord (one program), when installed
#   exit     the job's last instruction -> the supervisor's parent has
#            reaped the supervisor; floors: tini, gofloor
#   version  `podvisor version` exec -> reaped; floors: `tini --version`,
#            `gofloor version`
#   check    `podvisor check -c` of the same one-process file
#   idle     RSS (and its anonymous part) and threads of `podvisor run` with
#            N sleeping services, HTTP on 127.0.0.1:0, the control socket,
#            the timeline and the log tails on (the defaults), 2 s after the
#            last child started; floor: tini -s -g with many.sh's N sleeps
# Rounds alternate the subjects, so load from elsewhere hits them alike.
# Usage: [PV=podvisor] [IDLE_N="200 1000"] bench/startup.sh [ROUNDS]
#        STARTUP_LIB=1 source bench/startup.sh   (functions only, for compare.sh)
set -euo pipefail
st_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
st_root=$(dirname "$st_here")

# st_setup: a temporary directory with the launcher and, unless PV is set,
# podvisor built with make build's flags.
st_setup() {
  st_tmp=$(mktemp -d /tmp/podvisor-startup.XXXXXX)
  cc -O2 -o "$st_tmp/launch" "$st_here/startup/launch.c"
  (cd "$st_root" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$st_tmp/gofloor" ./bench/startup/gofloor)
  G=$st_tmp/gofloor
  if [ -z "${PV:-}" ]; then
    (cd "$st_root" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$st_tmp/podvisor" ./cmd/podvisor)
    PV=$st_tmp/podvisor
  fi
  L=$st_tmp/launch
  cat > "$st_tmp/one.yaml" <<YAML
listen: "off"
control: "off"
processes:
  c:
    type: job
    command: ["$L", "$st_tmp/f", "child", "c"]
YAML
}

# st_span FILE FROM TO: milliseconds between two stamps.
st_span() {
  awk -v a="$2" -v b="$3" '{t[$1" "$2]=$3} END {if (!(a in t) || !(b in t)) exit 1; printf "%.3f\n", (t[b]-t[a])/1e6}' "$1"
}

# st_job SUBJECT CMD...: runs CMD under the launcher with the child job;
# prints "start_ms exit_ms".
st_job() {
  local f=$st_tmp/f
  rm -f "$f"
  "$L" "$f" run "${@:2}" > /dev/null 2>&1 || return 1
  echo "$(st_span "$f" "launch start" "c exec") $(st_span "$f" "c exit" "launch end")"
}

# st_whole CMD...: exec -> reaped of a command that exits by itself (ms).
st_whole() {
  local f=$st_tmp/w
  rm -f "$f"
  "$L" "$f" run "$@" > /dev/null 2>&1 || return 1
  st_span "$f" "launch start" "launch end"
}

# st_peer_start KIND: exec of s6-svscan or supervisord -> their child's
# exec (ms); the peer is then stopped.
st_peer_start() {
  local f=$st_tmp/f d=$st_tmp/$1 lp i
  rm -rf "$f" "$d"; mkdir -p "$d"
  case $1 in
    s6)
      mkdir -p "$d/c"
      # An execline run script, as s6 users write them.
      printf '#!%s -P\n%s %s child c\n' "$(command -v execlineb)" "$L" "$f" > "$d/c/run"
      chmod +x "$d/c/run"
      "$L" "$f" run s6-svscan "$d" > /dev/null 2>&1 &
      ;;
    supervisord)
      printf '[supervisord]\nnodaemon=true\nuser=root\nlogfile=%s/sv.log\npidfile=%s/sv.pid\nchildlogdir=%s\n[program:c]\ncommand=%s %s child c\nstartsecs=0\nautorestart=false\n' \
        "$d" "$d" "$d" "$L" "$f" > "$d/sv.conf"
      "$L" "$f" run supervisord -n -c "$d/sv.conf" > /dev/null 2>&1 &
      ;;
  esac
  lp=$!
  for i in $(seq 1000); do
    grep -q '^c exec' "$f" 2>/dev/null && break
    sleep 0.01
  done
  pkill -TERM -f "s6-svscan $d\$" 2>/dev/null || true
  pkill -TERM -f "supervisord -n -c $d/sv.conf" 2>/dev/null || true
  wait "$lp" 2>/dev/null || true
  st_span "$f" "launch start" "c exec"
}

# st_settle N PGREP_ARGS...: waits (up to 30 s) until pgrep counts N
# processes, then 2 s more, so start-up's garbage and threads have settled.
st_settle() {
  local n=$1 i c
  shift
  for i in $(seq 600); do
    c=$(pgrep -c "$@") || true
    [ "${c:-0}" -ge "$n" ] && break
    sleep 0.05
  done
  sleep 2
}

# st_idle N: "rss_kib anon_kib threads" of podvisor with N sleeping
# services and everything on, 2 s after the last child started.
st_idle() {
  local n=$1 y=$st_tmp/idle.$1.yaml pid i
  { echo 'listen: "127.0.0.1:0"'
    echo "processes:"
    for i in $(seq 1 "$n"); do echo "  s$i: {command: [sleep, '2$$']}"; done; } > "$y"
  PODVISOR_CONTROL=$st_tmp/ctl.sock "$PV" run -c "$y" > "$st_tmp/idle.log" 2>&1 &
  pid=$!
  st_settle "$n" -P "$pid"
  awk '/^VmRSS/ {r=$2} /^RssAnon/ {a=$2} /^Threads/ {t=$2} END {print r, a, t}' "/proc/$pid/status"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
}

# st_idle_tini N: RSS of tini itself (KiB) over many.sh's N sleeps.
st_idle_tini() {
  local n=$1 pid
  tini -s -g -- "$st_root/bench/peers/many.sh" "$n" sleep "3$$" > /dev/null 2>&1 &
  pid=$!
  st_settle "$n" -f "^sleep 3$$\$"
  awk '/^VmRSS/ {print $2}' "/proc/$pid/status"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
}

# st_round REC: one round of every row; REC METRIC SUBJECT VALUE records.
st_round() {
  local rec=$1 v
  v=$(st_job direct "$L" "$st_tmp/f" child c) && $rec start direct "${v% *}"
  v=$(st_job tini tini -s -- "$L" "$st_tmp/f" child c) && { $rec start tini "${v% *}"; $rec exit tini "${v#* }"; }
  v=$(st_job gofloor "$G" "$L" "$st_tmp/f" child c) && { $rec start gofloor "${v% *}"; $rec exit gofloor "${v#* }"; }
  v=$(st_job podvisor "$PV" run -c "$st_tmp/one.yaml") && { $rec start podvisor "${v% *}"; $rec exit podvisor "${v#* }"; }
  v=$(st_whole tini --version) && $rec version tini "$v"
  v=$(st_whole "$G" version) && $rec version gofloor "$v"
  v=$(st_whole "$PV" version) && $rec version podvisor "$v"
  v=$(st_whole "$PV" check -c "$st_tmp/one.yaml") && $rec check podvisor "$v"
  if command -v s6-svscan > /dev/null; then v=$(st_peer_start s6) && $rec start s6 "$v"; fi
  if command -v supervisord > /dev/null; then v=$(st_peer_start supervisord) && $rec start supervisord "$v"; fi
  return 0
}

# st_idle_round REC: the idle rows for each N of IDLE_N.
st_idle_round() {
  local rec=$1 n v
  for n in ${IDLE_N:-200 1000}; do
    v=$(st_idle "$n")
    read -r rss anon thr <<< "$v"
    $rec "rss_$n" podvisor "$rss"; $rec "anon_$n" podvisor "$anon"; $rec "threads_$n" podvisor "$thr"
    $rec "rss_$n" tini "$(st_idle_tini "$n")"
  done
}

[ -n "${STARTUP_LIB:-}" ] && return 0

rounds=${1:-11}
if [ "$(id -u)" -ne 0 ]; then echo "run as root" >&2; exit 2; fi
"$st_root/scripts/deps.sh" tini gcc >&2
st_setup
trap 'pkill -f "^sleep [23]$$\$" 2>/dev/null; rm -rf "$st_tmp"' EXIT
raw=$st_tmp/raw
: > "$raw"
st_rec() { echo "$1 $2 $3" >> "$raw"; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds" >&2
  st_round st_rec
done
st_idle_round st_rec
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench/startup.sh $rounds on $(nproc) CPUs, Linux $(uname -r); load $load0 at start, $load1 at end; podvisor $(cd "$st_root" && git describe --always --dirty 2>/dev/null || echo dev)"
echo
awk '
function med(m, s,   n, i, j, t, a) {
  n = cnt[m, s]; if (n == 0) return -1
  for (i = 1; i <= n; i++) a[i] = val[m, s, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  lo[m, s] = a[1]; hi[m, s] = a[n]
  return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function cell(m, s,   v) { v = med(m, s); if (v < 0) return "-"; return sprintf("%.2f (%.2f-%.2f)", v, lo[m, s], hi[m, s]) }
{ cnt[$1, $2]++; val[$1, $2, cnt[$1, $2]] = $3 }
END {
  print "| row (ms; median (min-max)) | podvisor | tini | Go floor | direct | s6 | supervisord |"
  print "|---|---|---|---|---|---|---|"
  printf "| exec -> first child exec'\''d | %s | %s | %s | %s | %s | %s |\n", cell("start", "podvisor"), cell("start", "tini"), cell("start", "gofloor"), cell("start", "direct"), cell("start", "s6"), cell("start", "supervisord")
  printf "| job exit -> supervisor reaped | %s | %s | %s | | | |\n", cell("exit", "podvisor"), cell("exit", "tini"), cell("exit", "gofloor")
  printf "| version | %s | %s | %s | | | |\n", cell("version", "podvisor"), cell("version", "tini"), cell("version", "gofloor")
  printf "| check | %s | | | | | |\n", cell("check", "podvisor")
  for (k in cnt) { split(k, p, SUBSEP); if (p[1] ~ /^rss_/) ns[substr(p[1], 5)] = 1 }
  for (n in ns) printf "| idle, %s children: RSS / anon KiB / threads | %d / %d / %d | RSS %d | | | | |\n", n, med("rss_" n, "podvisor"), med("anon_" n, "podvisor"), med("threads_" n, "podvisor"), med("rss_" n, "tini")
}' "$raw"
