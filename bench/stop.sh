#!/usr/bin/env bash
# Stop and scale (issue 30): podvisor's stop against tini -g, the ordered
# chain step against its C floor, a job's exit to podvisor's exit, and
# 10,000 processes. Every figure is taken from the children's own clocks
# (bench/stampchild) or by bench/stampchild/stopclock, a C parent that sends
# the SIGTERM and waits, and stands next to a floor from the same round.
#   stop   N independent stampchildren (N = 200, 1000), SIGTERM to the
#          supervisor -> the later of its exit and the last child's exit:
#          podvisor ($PV, and $OLD if set) against
#          `tini -s -g -- many.sh N stampchild ...`, and against
#          bench/stampchild/stopfloor (a C supervisor with podvisor's
#          per-process kernel objects: a group, two pipes, TERM and CONT
#          to each group; STOPFLOOR_VARIANTS=1 adds it without pipes (-P)
#          and without both (-P -C))
#   chain  the ordered 10-chain stop step (bench/effect.sh's row) against
#          bench/stampchild/chainfloor (a C parent: kill, waitpid, kill)
#   job    one job (stampchild mode exit, JOB_MS after its start): its exit
#          stamp -> the supervisor's exit, podvisor against
#          `tini -s -- stampchild`, median of JOBS runs
#   scale  SCALE_N children (default 10,000, capped by RLIMIT_NOFILE: podvisor
#          holds two pipe fds per child): start against a shell loop, the
#          worst /livez latency while they start, while they run (STEADY_SECS)
#          and while they stop, each next to the worst /readyz (its floor:
#          /readyz does not wait for the loop), the stop itself (SIGTERM to
#          the later of podvisor's exit and the last child's), podvisor's RSS
# Usage: bench/stop.sh [ROUNDS]      (root is not needed; cc is)
# Env:   PV=podvisor binary (default: a private release build of this tree),
#        OLD=a second podvisor binary measured alongside (e.g. main's),
#        ONLY="stop chain job scale", JOBS=11, JOB_MS=300, STEADY_SECS=3,
#        SCALE_N=10000
# Prints "row key=value ..." lines per round, then the medians.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/effect.sh
EFFECT_LIB=1 source "$here/effect.sh"

rounds=${1:-3}
only=${ONLY:-stop chain job scale}
want() { [[ " $only " == *" $1 "* ]]; }
effect_setup
trap 'rm -rf "$etmp"' EXIT
cc -O2 -o "$etmp/stopclock" "$here/stampchild/stopclock.c"
cc -O2 -o "$etmp/stopfloor" "$here/stampchild/stopfloor.c"
SCK=$etmp/stopclock
raw=$etmp/raw
# 10,000 children need 20,000 pipe fds in podvisor (and as many pids).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
ulimit -u unlimited 2>/dev/null || ulimit -u "$(ulimit -Hu)" 2>/dev/null || true

builds=(pv)
declare -A bin=([pv]=$PV)
if [ -n "${OLD:-}" ]; then builds+=(old); bin[old]=$OLD; fi

cat > "$etmp/many.sh" <<'EOF'
#!/bin/sh
# many.sh N FILE STAMPCHILD: what a user of tini writes for N processes.
n=$1 i=0
while [ "$i" -lt "$n" ]; do "$3" "$2" "s$i" none & i=$((i + 1)); done
wait
EOF
chmod +x "$etmp/many.sh"

flat_yaml() { # flat_yaml N STAMPS > yaml
  local i
  echo "shutdown_timeout: 60s"
  echo "processes:"
  for i in $(seq 1 "$1"); do echo "  s$i: {command: [$SC, $2, s$i, none]}"; done
}

# stop_one WHO N: one stop, "end_ms=... stop_ms=... ..." from stopclock.
stop_one() {
  local f=$etmp/stop.$2
  rm -f "$f"
  if [ "$1" = tini ]; then
    "$SCK" "$f" "$2" 300 tini -s -g -- "$etmp/many.sh" "$2" "$f" "$SC"
  elif [[ $1 == floor* ]]; then
    # floor, floorP (no pipes), floorPC (no pipes, no SIGCONT)
    local fl=()
    [[ $1 == *P* ]] && fl+=(-P)
    [[ $1 == *C ]] && fl+=(-C)
    "$SCK" "$f" "$2" 300 "$etmp/stopfloor" "${fl[@]}" "$2" "$SC" "$f" {} none
  else
    [ -f "$etmp/flat.$2.yaml" ] || flat_yaml "$2" "$f" > "$etmp/flat.$2.yaml"
    "$SCK" "$f" "$2" 300 "${bin[$1]}" run -c "$etmp/flat.$2.yaml" --listen off 2> /dev/null | tail -1
  fi
}

# job_tail WHO: median over JOBS runs of the job's exit -> the supervisor's exit (ms).
# The job runs JOB_MS (default 300) before it exits, so that the supervisor's
# own start-up is over by then: what is timed is the exit path alone.
job_tail() {
  local f=$etmp/job.stamps i
  export STAMPCHILD_DELAY_MS=${JOB_MS:-300}
  printf 'processes:\n  j: {type: job, command: [%s, %s, j, exit]}\n' "$SC" "$f" > "$etmp/job.yaml"
  for i in $(seq 1 "${JOBS:-11}"); do
    rm -f "$f"
    if [ "$1" = tini ]; then
      "$SCK" "$f" 0 0 tini -s -- "$SC" "$f" j exit
    else
      "$SCK" "$f" 0 0 "${bin[$1]}" run -c "$etmp/job.yaml" --listen off 2> /dev/null | tail -1
    fi
  done | sed 's/tail_ms=//' | med
  unset STAMPCHILD_DELAY_MS
}

# scale_n: SCALE_N, or as many as podvisor's fd limit allows (two pipe fds a
# child, 64 for podvisor itself).
scale_n() {
  local n=${SCALE_N:-10000} cap
  cap=$((($(ulimit -n) - 64) / 2))
  [ "$cap" -lt "$n" ] && n=$cap
  echo "$n"
}

# pv_scale BUILD N: start, /livez throughout, stop. Prints key=value pairs.
# The config names the child and its stamps through a short link to $etmp:
# 10,000 processes with the full paths pass podvisor's 1 MiB config limit.
pv_scale() {
  local b=$1 n=$2 f=$etmp/scale.stamps port pid poller t0 t1 t2 t3 rss i
  local short=/tmp/pvs.$$
  rm -f "$f" "$etmp/scale.livez" "$short"
  ln -s "$etmp" "$short"
  { echo "shutdown_timeout: 60s"; echo "processes:"
    for i in $(seq 1 "$n"); do echo "  s$i: {command: [$short/stampchild, $short/scale.stamps, s$i, none]}"; done; } > "$etmp/scale.yaml"
  port=$((30000 + RANDOM % 20000))
  t0=$(now_ns)
  "${bin[$b]}" run -c "$etmp/scale.yaml" --listen "127.0.0.1:$port" > "$etmp/pv.log" 2>&1 &
  pid=$!
  # The sampler asks /livez (which waits for the loop) every 10 ms until
  # podvisor is gone, stamping each answer with the wall clock, and /readyz
  # right after: it reads the published snapshot and never waits for the
  # loop, so its latency is the floor (the client and the HTTP server being
  # scheduled on a machine busy with thousands of children).
  python3 - "$port" > "$etmp/scale.livez" <<'PY' &
import sys, time, http.client
port = int(sys.argv[1])
seen, began = False, time.monotonic()
def get(path):
    t = time.monotonic()
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=5)
    c.request('GET', path); c.getresponse().read(); c.close()
    return (time.monotonic() - t) * 1000
while True:
    try:
        at = time.time_ns()
        d = get('/livez')
        f = get('/readyz')
    except OSError:
        if seen or time.monotonic() - began > 120:
            break
        time.sleep(0.005); continue
    seen = True
    print(at, f"{d:.2f}", f"{f:.2f}", flush=True)
    time.sleep(0.01)
PY
  poller=$!
  # Until all N have exec'd; a podvisor that exits meanwhile (a config it
  # refused, fds it ran out of) fails the row at once.
  until [ -f "$f" ] && [ "$(grep -c ' exec ' "$f")" -ge "$n" ]; do
    if ! kill -0 $pid 2> /dev/null; then
      kill $poller 2> /dev/null || true
      echo "podvisor exited during the start of $n:" >&2
      tail -3 "$etmp/pv.log" >&2
      return 1
    fi
    sleep 0.1
  done
  t1=$(last_exec "$f")
  sleep "${STEADY_SECS:-3}"
  rss=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
  t2=$(now_ns)
  kill -TERM $pid
  wait $pid || true
  t3=$(now_ns)
  wait $poller || true
  local lastexit
  lastexit=$(awk '$2=="exit" {if ($3>m) m=$3} END {print m}' "$f")
  [ "$lastexit" -gt "$t3" ] && t3=$lastexit
  rm -f "$short"
  [ -n "${KEEP_LIVEZ:-}" ] && { echo "$t0 $t1 $t2 $t3"; cat "$etmp/scale.livez"; } > "$KEEP_LIVEZ.$b.$(date +%s)"
  awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" -v rss="$rss" -v n="$n" '
    { if ($1 < t1) s = "start"; else if ($1 < t2) s = "steady"; else s = "stop"
      if ($2 + 0 > w[s]) w[s] = $2 + 0; if ($3 + 0 > fl[s]) fl[s] = $3 + 0; c[s]++ }
    END { printf "n=%d start_ms=%.1f stop_ms=%.1f rss_kib=%d", n, (t1 - t0) / 1e6, (t3 - t2) / 1e6, rss
      split("start steady stop", ph, " ")
      for (i = 1; i <= 3; i++) printf " livez_%s_max_ms=%.1f readyz_%s_max_ms=%.1f livez_%s_n=%d", ph[i], w[ph[i]], ph[i], fl[ph[i]], ph[i], c[ph[i]]
      printf "\n" }' "$etmp/scale.livez"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
field() { tr ' ' '\n' <<< "$2" | sed -n "s/^$1=//p"; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, podvisor $PV${OLD:+, old $OLD}, RLIMIT_NOFILE $(ulimit -n)"
for r in $(seq 1 "$rounds"); do
  if want stop; then
    for n in 200 1000; do
      t=$(stop_one tini "$n")
      te=$(field end_ms "$t")
      fe=$(field end_ms "$(stop_one floor "$n")")
      if [ -n "${STOPFLOOR_VARIANTS:-}" ]; then
        echo "stopfloor $n floor_end_ms=$fe nopipes_end_ms=$(field end_ms "$(stop_one floorP "$n")") nopipes_nocont_end_ms=$(field end_ms "$(stop_one floorPC "$n")") tini_end_ms=$te" | tee -a "$raw"
      fi
      for b in "${builds[@]}"; do
        p=$(stop_one "$b" "$n")
        pe=$(field end_ms "$p")
        echo "stop $n/$b end_ms=$pe tini_end_ms=$te x=$(ratio "$pe" "$te") floor_end_ms=$fe xfloor=$(ratio "$pe" "$fe") floor_x_tini=$(ratio "$fe" "$te") lastterm_ms=$(field lastterm_ms "$p") tini_lastterm_ms=$(field lastterm_ms "$t")" | tee -a "$raw"
      done
    done
  fi
  if want chain; then
    for b in "${builds[@]}"; do
      PV=${bin[$b]}
      s=$(pv_stop_chain)
      fl=$(chain_floor)
      echo "chain10 $b step_ms=$s floor_ms=$fl over_ms=$(awk -v a="$s" -v b="$fl" 'BEGIN {printf "%.4f", a - b}')" | tee -a "$raw"
    done
    PV=${bin[pv]}
  fi
  if want job; then
    t=$(job_tail tini)
    for b in "${builds[@]}"; do
      p=$(job_tail "$b")
      echo "job $b tail_ms=$p tini_tail_ms=$t over_ms=$(awk -v a="$p" -v b="$t" 'BEGIN {printf "%.3f", a - b}')" | tee -a "$raw"
    done
  fi
  if want scale; then
    n=$(scale_n)
    fl=$(shell_start "$n")
    for b in "${builds[@]}"; do
      s=$(pv_scale "$b" "$n")
      echo "scale $b $s floor_start_ms=$fl start_x=$(ratio "$(field start_ms "$s")" "$fl")" | tee -a "$raw"
    done
  fi
done
echo "# medians over $rounds rounds (load average now $(cut -d' ' -f1-3 /proc/loadavg))"
awk '{row=$1" "$2; for (i=3;i<=NF;i++) if (split($i,kv,"=")==2) {k=row" "kv[1]; n[k]++; v[k,n[k]]=kv[2]; keys[k]=1}}
END {for (k in keys) {m=n[k]; for (i=1;i<=m;i++) a[i]=v[k,i]; for (i=2;i<=m;i++) for (j=i;j>1&&a[j-1]+0>a[j]+0;j--) {t=a[j];a[j]=a[j-1];a[j-1]=t}; printf "%s median=%s min=%s max=%s\n", k, (m%2)?a[(m+1)/2]:(a[m/2]+a[m/2+1])/2, a[1], a[m]}}' "$raw" | sort
