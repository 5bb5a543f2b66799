#!/usr/bin/env bash
# Makes the two base images Dockerfile.base starts from when no container
# registry is reachable (CI): a minimal Debian bookworm, and the same with the
# host's Go toolchain (/usr/local/go) as the build stage's Go image. Both come
# from Debian packages (mmdebstrap) and `podman import`; images already present
# are kept, so only the first run on a machine pays (~30 s).
#
#   scripts/image-bases.sh      prints BASE_IMAGE=... and GO_IMAGE=..., the
#                               --build-arg values for Dockerfile.base
#   scripts/image-bases.sh arm64
#                               also prints BASE_IMAGE_arm64=IMAGE-ID, the
#                               Debian base of that architecture (for
#                               scripts/image-multiarch.sh)
#
# A base of another architecture is the same Debian release's required
# packages unpacked without running their maintainer scripts (mmdebstrap's
# extract variant), so that no emulator is needed to make it: the files of
# debian:*-slim for that architecture, without a configured dpkg database.
# It is printed as an image id: podman 4.3 does not find a local image of a
# foreign architecture by name when building for that platform.
#
# With a registry, none of this is needed: Dockerfile.base's defaults are the
# public debian and golang images.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
podman="$here/podman.sh"
suite=bookworm
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
goroot="$(go env GOROOT)"
gover="$(go env GOVERSION)"
base="localhost/podvisor-ci/debian:$suite"
goimg="localhost/podvisor-ci/golang:${gover#go}-$suite"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
pids=()
if ! "$podman" image exists "$base"; then
  (mmdebstrap --quiet --variant=minbase "$suite" "$work/base.tar" "$mirror" \
    && "$podman" import --quiet --change "ENV PATH=$path" --change 'CMD ["bash"]' "$work/base.tar" "$base" >/dev/null) >&2 &
  pids+=($!)
fi
if ! "$podman" image exists "$goimg"; then
  # `go mod download` fetches modules over HTTPS, through whatever proxy the
  # host trusts: the image gets the host's CA bundle when it has one.
  hooks=(--customize-hook="copy-in $goroot /usr/local")
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    hooks+=(--customize-hook="copy-in /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs")
  fi
  (mmdebstrap --quiet --variant=minbase --include=ca-certificates "${hooks[@]}" "$suite" "$work/go.tar" "$mirror" \
    && "$podman" import --quiet --change "ENV PATH=/usr/local/go/bin:$path" \
      --change "ENV GOTOOLCHAIN=local" "$work/go.tar" "$goimg" >/dev/null) >&2 &
  pids+=($!)
fi
host_arch="$(go env GOARCH)"
for arch in "$@"; do
  [ "$arch" = "$host_arch" ] && continue
  img="$base-$arch"
  if ! "$podman" image exists "$img"; then
    (mmdebstrap --quiet --variant=extract --include='?priority(required)' --architectures="$arch" \
        "$suite" "$work/base-$arch.tar" "$mirror" \
      && "$podman" import --quiet --arch "$arch" --change "ENV PATH=$path" --change 'CMD ["bash"]' \
        "$work/base-$arch.tar" "$img" >/dev/null) >&2 &
    pids+=($!)
  fi
done
for p in "${pids[@]}"; do wait "$p"; done
echo "BASE_IMAGE=$base"
echo "GO_IMAGE=$goimg"
for arch in "$@"; do
  [ "$arch" = "$host_arch" ] && continue
  echo "BASE_IMAGE_$arch=$("$podman" image inspect --format '{{.Id}}' "$base-$arch")"
done
