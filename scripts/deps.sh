#!/usr/bin/env bash
# Installs the Debian packages given as arguments when they are missing.
# Needs root (or passwordless sudo) only when something is missing.
#
# Another apt may hold the package locks (on a fresh CI machine,
# unattended-upgrades often does): apt-get waits for them up to
# PODVISOR_APT_LOCK_TIMEOUT seconds (default 600) instead of failing at once
# with "Could not get lock". DPkg::Lock::Timeout covers dpkg's locks; an
# apt-get update that still finds the package lists locked (apt versions
# whose update does not wait) is retried every PODVISOR_APT_LOCK_POLL
# seconds (default 5) until the same deadline.
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
lock_timeout=${PODVISOR_APT_LOCK_TIMEOUT:-600}
poll=${PODVISOR_APT_LOCK_POLL:-5}
apt_get() { $sudo apt-get -o DPkg::Lock::Timeout="$lock_timeout" "$@"; }

deadline=$((SECONDS + lock_timeout))
said=0
until out=$(apt_get update -qq 2>&1); do
  if ! grep -q "Could not get lock" <<<"$out"; then
    printf '%s\n' "$out" >&2
    exit 1
  fi
  if ((SECONDS >= deadline)); then
    printf '%s\n' "$out" >&2
    echo "deps.sh: another apt still holds the lock after ${lock_timeout}s (PODVISOR_APT_LOCK_TIMEOUT)" >&2
    exit 1
  fi
  if ((!said)); then
    echo "waiting up to ${lock_timeout}s for another apt to release its lock: ${out%%$'\n'*}"
    said=1
  fi
  sleep "$poll"
done
[ -n "$out" ] && printf '%s\n' "$out"
apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
