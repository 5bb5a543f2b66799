#!/usr/bin/env bash
# Lets this machine run binaries of other architectures through qemu-user
# (Debian's qemu-user-static), the way a multi-arch image build and its test
# need it: mounts binfmt_misc if it is not mounted and registers the
# interpreter of each architecture named (qemu names: aarch64, s390x, ...)
# from /usr/lib/binfmt.d, with its F flag so that it also works inside a
# container's root. Registration is machine-wide and lasts until reboot;
# entries already present are kept. Root only.
#
#   scripts/binfmt.sh aarch64        exits 0 when aarch64 binaries now run
set -euo pipefail
dir=/proc/sys/fs/binfmt_misc
if [ ! -e "$dir/register" ]; then
  mount -t binfmt_misc binfmt_misc "$dir"
fi
for arch in "$@"; do
  if [ -e "$dir/qemu-$arch" ]; then
    echo 1 >"$dir/qemu-$arch" # enable it if it was disabled
    continue
  fi
  conf=/usr/lib/binfmt.d/qemu-$arch.conf
  if [ ! -f "$conf" ]; then
    echo "binfmt.sh: no $conf: install qemu-user-static" >&2
    exit 1
  fi
  grep -v '^#' "$conf" >"$dir/register"
done
