#!/bin/sh
# orphans.sh N DONE SECONDS MARK: a subshell starts N background
# "sleep SECONDS" and exits at once, so they are orphans and are adopted by
# PID 1 (the supervisor under test). Then this process creates DONE and
# keeps running as "sleep MARK", so no supervisor restarts it.
n=$1 done=$2 secs=$3 mark=$4
(
  i=0
  while [ "$i" -lt "$n" ]; do
    sleep "$secs" &
    i=$((i + 1))
  done
)
: > "$done"
exec sleep "$mark"
