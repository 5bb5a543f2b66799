#!/bin/sh
# The first step, as root: makes the state directories with the owners the
# services need, and links $STATE/pgbin to the newest PostgreSQL installed
# (Debian keeps its programs in /usr/lib/postgresql/<major>/bin, off PATH).
set -eu
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ]; then
  echo "no PostgreSQL under /usr/lib/postgresql: apt-get install postgresql" >&2
  exit 1
fi
mkdir -p "$STATE"
install -d -o postgres -g postgres -m 0700 "$STATE/pgdata"
install -d -o redis -g redis -m 0750 "$STATE/redis"
ln -sfn "$bin" "$STATE/pgbin"
echo "PostgreSQL programs: $bin"
