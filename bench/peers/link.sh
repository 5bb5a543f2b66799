#!/bin/bash
# link.sh NAME EVENTS MARK [DELAY]: one link of the readiness chain. It
# appends "TIME start NAME" when it runs, waits DELAY seconds (the first
# link only, so that every s6 waiter is in place before the chain starts),
# appends "TIME ready NAME", signals readiness with a newline on fd 3
# (podvisor's "notify: fd:3", s6's notification-fd) and idles as
# "sleep MARK". bash's $EPOCHREALTIME needs no fork.
printf '%s start %s\n' "$EPOCHREALTIME" "$1" >> "$2"
if [ -n "${4:-}" ]; then sleep "$4"; fi
printf '%s ready %s\n' "$EPOCHREALTIME" "$1" >> "$2"
printf '\n' >&3
exec sleep "$3"
