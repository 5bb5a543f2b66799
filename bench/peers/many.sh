#!/bin/sh
# many.sh N COMMAND [ARG...]: what a user of tini or dumb-init writes to run
# N processes in one container: start them in the background and wait.
# tini -g and dumb-init signal the whole process group, so a SIGTERM to
# them reaches every background process too.
n=$1
shift
i=0
while [ "$i" -lt "$n" ]; do
  "$@" &
  i=$((i + 1))
done
wait
