#!/usr/bin/env bash
# Issue 29: 1,000,000 lines of 100 B from a job (bench/logfiles/numlines.c,
# line i is i in 99 digits), timed at the effect: from the launch to the
# last write of the file that holds the last line (its mtime), each next to
# a floor measured in the same round, the child writing a file itself:
#   file   podvisor writes the job's stdout to its log file, rotated at
#          10 MiB with 5 files kept (log: {stdout: file, max_size: 10MiB,
#          max_files: 5}); checked: 5 files, the kept lines consecutive and
#          ending with the last one
#   json   podvisor's stdout (a file) with --log-format json; every line of
#          the job is there (its mtime also covers podvisor's last messages)
#   jfloor the generator writing those JSON lines itself (numlines N json:
#          195 bytes a line against 100), the floor of any writer of them;
#          json_j is json against it
#   cat    the generator piped through cat into the file: what one pipe and
#          the simplest reader cost, whatever the reader does with the lines
#   text   podvisor's stdout as text, section 12's row; with OLD=path also
#          that build, for the default path before and after
#   rw, splice  with SPLICE=1: bench/logfiles/pipecopy.c copying the pipe
#          into the file with read/write, and with splice(2)
# Rounds alternate the rows, so load from elsewhere hits them alike. An
# mtime is the kernel's coarse clock: each end is up to a tick early (4 ms
# at HZ=250), which noise of that size in every row shows.
# Each row is also timed from the generator's own start (it writes the
# time to a file: NUMLINES_START), the *_c keys: podvisor's start-up (some
# 10 ms before the child runs, none of it the log pipeline's) left out of
# both sides; the floor's *_c is its run without the exec.
# Usage: [PV=podvisor] [OLD=podvisor] [SPLICE=1] [LINES=1000000] [MAXSIZE=10MiB] bench/logfiles.sh [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
rounds=${1:-3}
lines=${LINES:-1000000}
t=$(mktemp -d /tmp/podvisor-logfiles.XXXXXX)
trap 'rm -rf "$t"' EXIT
if [ -z "${PV:-}" ]; then
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$t/podvisor" ./cmd/podvisor)
  PV=$t/podvisor
fi
cc -O2 -o "$t/numlines" "$here/logfiles/numlines.c"
cc -O2 -o "$t/pipecopy" "$here/logfiles/pipecopy.c"

now_ns() { date +%s%N; }
mtime_ns() { stat -c %.9Y "$1" | tr -d .; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (b - a) / 1e6}'; }

cat > "$t/file.yaml" <<YAML
listen: "off"
control: "off"
processes:
  gen:
    type: job
    command: ["$t/numlines", "$lines"]
    env: {NUMLINES_START: "$t/start"}
    log: {stdout: file, file: "$t/logs/gen.log", max_size: ${MAXSIZE:-10MiB}, max_files: 5}
YAML
cat > "$t/stdout.yaml" <<YAML
listen: "off"
control: "off"
processes:
  gen:
    type: job
    command: ["$t/numlines", "$lines"]
    env: {NUMLINES_START: "$t/start"}
YAML
last=$(printf '%099d' $((lines - 1)))

# check_files ROUND: the rotated log holds 5 files whose lines run on
# without a gap up to the last line (strictly on round 1, by ends later).
check_files() {
  local files n
  files=$(ls "$t"/logs/gen-*.log 2>/dev/null | sort; echo "$t/logs/gen.log")
  n=$(echo "$files" | wc -l)
  [ "$n" -eq 5 ] || { echo "file: $n files, want 5" >&2; return 1; }
  [ "$(tail -c 100 "$t/logs/gen.log" | head -c 99)" = "$last" ] || { echo "file: last line missing" >&2; return 1; }
  if [ "$1" -eq 1 ]; then
    # shellcheck disable=SC2086
    cat $files | awk -v want="$lines" 'NR == 1 {first = $0 + 0} length($0) != 99 || $0 + 0 != first + NR - 1 {bad++} END {if (bad || first + NR != want) {print "file: gap or torn line: " bad " bad, " NR " kept from " first > "/dev/stderr"; exit 1}}'
  fi
}

run_row() { # row round -> "ms ms_from_child_start"
  local row=$1 round=$2 t0 end
  rm -f "$t/start"
  case $row in
  floor)
    t0=$(now_ns); NUMLINES_START=$t/start "$t/numlines" "$lines" > "$t/direct.out"; end=$(mtime_ns "$t/direct.out") ;;
  jfloor)
    t0=$(now_ns); NUMLINES_START=$t/start "$t/numlines" "$lines" json > "$t/direct.out"; end=$(mtime_ns "$t/direct.out") ;;
  cat)
    t0=$(now_ns); NUMLINES_START=$t/start "$t/numlines" "$lines" | cat > "$t/direct.out"; end=$(mtime_ns "$t/direct.out") ;;
  rw | splice)
    t0=$(now_ns); NUMLINES_START=$t/start "$t/pipecopy" "$row" "$t/direct.out" "$t/numlines" "$lines"; end=$(mtime_ns "$t/direct.out") ;;
  file)
    rm -rf "$t/logs"
    t0=$(now_ns); "$PV" run -c "$t/file.yaml" > "$t/pv.out"; end=$(mtime_ns "$t/logs/gen.log")
    check_files "$round" ;;
  json)
    t0=$(now_ns); "$PV" run -c "$t/stdout.yaml" --log-format json > "$t/pv.out"; end=$(mtime_ns "$t/pv.out")
    [ "$(grep -c '"process":"gen","stream":"stdout","incarnation":1,"line":"[0-9]\{99\}"}$' "$t/pv.out")" -eq "$lines" ] || { echo "json: lines lost" >&2; return 1; } ;;
  text | old)
    local pv=$PV; [ "$row" = old ] && pv=$OLD
    t0=$(now_ns); "$pv" run -c "$t/stdout.yaml" > "$t/pv.out"; end=$(mtime_ns "$t/pv.out")
    [ "$(grep -c '^gen  *| [0-9]\{99\}$' "$t/pv.out")" -eq "$lines" ] || { echo "$row: lines lost" >&2; return 1; } ;;
  esac
  rm -f "$t/pv.out" "$t/direct.out"
  echo "$(ms "$t0" "$end") $(ms "$(cat "$t/start")" "$end")"
}

rows="floor jfloor cat file json text"
[ -n "${OLD:-}" ] && rows="$rows old"
[ -n "${SPLICE:-}" ] && rows="$rows rw splice"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  line="round $r"
  declare -A v c
  for row in $rows; do
    read -r v[$row] c[$row] <<< "$(run_row "$row" "$r")"
    line="$line $row=${v[$row]}"
  done
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
  for row in $rows; do
    [ "$row" = floor ] || line="$line ${row}_x=$(ratio "${v[$row]}" "${v[floor]}")"
  done
  line="$line json_j=$(ratio "${v[json]}" "${v[jfloor]}")"
  for row in $rows; do
    line="$line ${row}_c=${c[$row]}"
  done
  for row in $rows; do
    [ "$row" = floor ] || line="$line ${row}_cx=$(ratio "${c[$row]}" "${c[floor]}")"
  done
  line="$line json_cj=$(ratio "${c[json]}" "${c[jfloor]}")"
  echo "$line"
done | tee "$t/rounds"
# Medians of each key over the rounds.
awk '{for (i = 3; i <= NF; i++) {split($i, kv, "="); n[kv[1]]++; v[kv[1], n[kv[1]]] = kv[2]; if (!(kv[1] in seen)) {seen[kv[1]] = 1; order[++k] = kv[1]}}}
  END {printf "median"; for (j = 1; j <= k; j++) {key = order[j]; m = n[key]; for (a = 1; a <= m; a++) x[a] = v[key, a]; for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (x[b] + 0 < x[a] + 0) {tmp = x[a]; x[a] = x[b]; x[b] = tmp}; printf " %s=%s", key, x[int((m + 1) / 2)]}; print ""}' "$t/rounds"
