#!/usr/bin/env bash
# podman as the image tests run it (make test-image, test/image). The one place
# that knows what CI machines need: scripts/podman.conf, loaded through
# CONTAINERS_CONF, selects runc with cgroupfs (crun refuses the machines'
# hybrid cgroup layout) and explicit ulimits (without CAP_SYS_RESOURCE
# podman's defaults fail to apply). Users run plain podman or docker.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# The limits in podman.conf must not exceed the host's hard limit.
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt 8192 ]; then
  echo "scripts/podman.sh: the hard open-files limit is $(ulimit -Hn); scripts/podman.conf asks for 8192: lower it there" >&2
  exit 1
fi
export CONTAINERS_CONF="$here/podman.conf"
exec podman "$@"
