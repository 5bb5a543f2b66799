# Sourced by release.sh and deb.sh: the settings they share, from the
# environment or from git, and the functions both use.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
go=${GO:-go}
dist=${DIST:-$root/dist}
tools=${TOOLS:-$root/.tools}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
all_arches=(amd64 arm64 arm 386 riscv64 ppc64le s390x)

# tool NAME PACKAGE@VERSION: the path of a pinned Go tool in $tools,
# installed there the first time.
tool() {
  if [ ! -x "$tools/$1" ]; then
    echo "installing $1 into $tools" >&2
    GOBIN=$tools "$go" install "$2"
  fi
  echo "$tools/$1"
}

# binname ARCH: the release binary's file name (arm is built as armv7).
binname() {
  if [ "$1" = arm ]; then echo podvisor-linux-armv7; else echo "podvisor-linux-$1"; fi
}

# write_sums: SHA256SUMS of every other file in $dist, in the format
# `sha256sum -c` reads.
write_sums() {
  (cd "$dist" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
  echo "wrote $dist/SHA256SUMS"
}
