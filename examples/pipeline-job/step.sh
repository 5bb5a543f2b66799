#!/bin/bash
# step.sh NAME COMMAND [ARG...] runs one pipeline step. Its output goes to
# stdout (podvisor shows it as "NAME | ...") and, prefixed with NAME, to
# $SPOOL, the file the log shipper tails. Exits with the command's status.
#
# When podvisor stops the step, its whole process group gets the stop signal.
# The copier loop ignores it and copies until the command's last line; this
# script waits for both (bash runs a trap only after the pipeline ends), so
# the step has exited only once all its output is in the spool.
set -u
name=$1
shift
mkdir -p "$(dirname "$SPOOL")"
say() {
  echo "$1"
  echo "$name | $1" >>"$SPOOL"
}
trap 'say "stopped by podvisor"' TERM
say "\$ $*"
"$@" 2>&1 | (
  trap '' TERM
  exec 3>>"$SPOOL"
  # Line by line (a pipe gives each line as it comes), the last one even
  # without its newline.
  while IFS= read -r line || [ -n "$line" ]; do
    printf '%s\n' "$line"
    printf '%s | %s\n' "$name" "$line" >&3
  done
)
exit "${PIPESTATUS[0]}"
