#!/usr/bin/env bash
# Packages release binaries (scripts/release.sh, already in DIST) as .deb
# files with nfpm: /usr/bin/podvisor, the bash, zsh and fish completions and
# the man page podvisor(1), all generated from the command table. Then it
# adds them to SHA256SUMS. docs/install.md says how to install one.
#
#   scripts/deb.sh                 # a .deb for each binary in DIST
#   scripts/deb.sh amd64 arm64     # only these
set -euo pipefail
# shellcheck source=release-common.sh
. "$(dirname "$0")/release-common.sh"
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=("${all_arches[@]}")
nfpm=$(tool nfpm github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2)

# A Debian version starts with a digit: v1.2.3 is 1.2.3, a bare commit
# (no tag yet) is 0~git<commit>.
debversion=${version#v}
[[ $debversion =~ ^[0-9] ]] || debversion="0~git$debversion"
# Files in the package get the commit's time, not the build's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

# The completions and the man page do not depend on the architecture: the
# host's build writes them.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 "$go" build -trimpath -o "$work/podvisor" ./cmd/podvisor
for shell in bash zsh fish; do "$work/podvisor" completion "$shell" >"$work/podvisor.$shell"; done
"$work/podvisor" __man | gzip -n -9 >"$work/podvisor.1.gz"

debarch() {
  case $1 in
    arm) echo armhf ;;
    386) echo i386 ;;
    ppc64le) echo ppc64el ;;
    *) echo "$1" ;;
  esac
}

for arch in "${arches[@]}"; do
  bin=$dist/$(binname "$arch")
  if [ ! -f "$bin" ]; then
    echo "deb.sh: $bin is missing; run scripts/release.sh $arch first" >&2
    exit 1
  fi
  cat >"$work/nfpm.yaml" <<EOF
name: podvisor
arch: $(debarch "$arch")
platform: linux
version: "$debversion"
version_schema: none
section: admin
priority: optional
maintainer: podvisor maintainers <podvisor@users.noreply.github.com>
homepage: https://github.com/podvisor/podvisor
description: |-
  In-pod process supervisor, PID 1 of a rich container
  podvisor reads a YAML dependency graph of processes, starts each one once
  its dependencies are ready, restarts them by policy and tears them down in
  reverse dependency order on SIGTERM. A static binary: it depends on nothing.
contents:
  - src: $bin
    dst: /usr/bin/podvisor
    file_info: {mode: 0755}
  - src: $work/podvisor.bash
    dst: /usr/share/bash-completion/completions/podvisor
  - src: $work/podvisor.zsh
    dst: /usr/share/zsh/vendor-completions/_podvisor
  - src: $work/podvisor.fish
    dst: /usr/share/fish/vendor_completions.d/podvisor.fish
  - src: $work/podvisor.1.gz
    dst: /usr/share/man/man1/podvisor.1.gz
EOF
  "$nfpm" package --config "$work/nfpm.yaml" --packager deb --target "$dist/" >/dev/null
  echo "built $dist/podvisor_${debversion}_$(debarch "$arch").deb"
done

write_sums
