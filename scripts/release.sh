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
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
go=${GO:-go}
dist=${DIST:-$root/dist}
tools=${TOOLS:-$root/.tools}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(amd64 arm64 arm 386 riscv64 ppc64le s390x)

cyclonedx=$tools/cyclonedx-gomod
if [ ! -x "$cyclonedx" ]; then
  echo "installing cyclonedx-gomod into $tools"
  GOBIN=$tools "$go" install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
fi

mkdir -p "$dist"
ldflags="-s -w -buildid= -X main.version=$version -X main.commit=$commit"
for arch in "${arches[@]}"; do
  name=podvisor-linux-$arch
  goarm=""
  if [ "$arch" = arm ]; then
    goarm=7
    name=podvisor-linux-armv7
  fi
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
# packages), in the format `sha256sum -c` reads.
cd "$dist"
find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS
echo "wrote $dist/SHA256SUMS"
