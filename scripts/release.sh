#!/usr/bin/env bash
# Builds the release into DIST (default dist/): one static binary per
# architecture (podvisor-linux-ARCH), a CycloneDX SBOM of each from the module
# graph (podvisor-linux-ARCH.cdx.json, by cyclonedx-gomod) and SHA256SUMS of
# all of them. docs/install.md says how users verify them.
#
#   scripts/release.sh                 # every architecture
#   scripts/release.sh amd64 arm64     # only these
#
# Reproducible: -trimpath, no VCS stamp of the go command (-buildvcs=false),
# an empty build id, and version and commit passed with -X, so that two
# builds of the same commit with the same Go are byte-identical
# (test/release checks it). VERSION and COMMIT may be given in the
# environment (a tree without .git, such as an exported source archive).
set -euo pipefail
# shellcheck source=release-common.sh
. "$(dirname "$0")/release-common.sh"
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=("${all_arches[@]}")
cyclonedx=$(tool cyclonedx-gomod github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0)

mkdir -p "$dist"
ldflags="-s -w -buildid= -X main.version=$version -X main.commit=$commit"
for arch in "${arches[@]}"; do
  name=$(binname "$arch")
  goarm=""
  [ "$arch" = arm ] && goarm=7
  echo "building $dist/$name"
  # One architecture at a time: the machine's cores go to one compile.
  env CGO_ENABLED=0 GOOS=linux GOARCH="$arch" GOARM="$goarm" \
    "$go" build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$dist/$name" ./cmd/podvisor
  # The SBOM lists the modules the go command linked into this binary (the
  # build information it records) and the Go standard library; no serial
  # number or timestamp, so that it is reproducible too. (cyclonedx-gomod's
  # app mode would read the same graph from source, but needs a plain git
  # clone: it fails in a worktree or an exported archive.)
  "$cyclonedx" bin -json -std -noserial -notimestamp -version "$version" \
    -output "$dist/$name.cdx.json" "$dist/$name"
done

# SHA256SUMS covers every file of the release made so far (binaries, SBOMs,
# packages).
write_sums
