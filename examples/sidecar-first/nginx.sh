#!/bin/sh
# Renders nginx.conf for this run (ports, paths under $STATE) and execs nginx
# in the foreground: exec, so that podvisor's stop signal reaches nginx itself.
set -eu
: "${STATE:?}" "${PROXY_PORT:?}" "${APP_PORT:?}"
PATH="$PATH:/usr/sbin" # nginx lives in sbin, which non-root PATHs often lack
prefix="$STATE/nginx"
mkdir -p "$prefix/tmp"
sed -e "s/@PROXY_PORT@/$PROXY_PORT/g" -e "s/@APP_PORT@/$APP_PORT/g" \
  "$(dirname "$0")/nginx.conf" >"$prefix/nginx.conf"
# -e stderr: never touch /var/log/nginx, even before the config is read.
exec nginx -e stderr -p "$prefix/" -c nginx.conf
