#!/usr/bin/env bash
# Builds Dockerfile.base for several architectures into one multi-arch image
# (an OCI image index, a podman manifest list), with podman. The build stage
# runs on this machine's architecture and cross-compiles (Dockerfile.base), so
# only the final stage, which runs nothing, is of the target's architecture:
# no emulator is needed to build, only to run the foreign images.
#
#   scripts/image-multiarch.sh NAME [ARCH...]   (default: amd64 arm64)
#
# NAME becomes the manifest list; each architecture's image is also tagged
# NAME-ARCH. To push: podman manifest push --all NAME docker://REGISTRY/NAME.
# With LOCAL_BASES=1 the Debian and Go bases are made locally
# (scripts/image-bases.sh) instead of pulled: machines without a registry.
# VERSION and COMMIT stamp the binary (default: from git).
#
# The images are built in Docker's format, the only one that keeps
# Dockerfile.base's HEALTHCHECK, so the list is a Docker manifest list (what
# Docker Hub serves for multi-arch images). `podman manifest push --all
# --format oci NAME DEST` writes it as an OCI image index instead, without
# the HEALTHCHECK (the OCI image format has no field for it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
podman="$here/podman.sh"
name="${1:?usage: image-multiarch.sh NAME [ARCH...]}"
shift
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(amd64 arm64)
version="${VERSION:-$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo dev)}"
commit="${COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
build_arch="$(go env GOARCH)"

declare -A bases=()
common=(--format docker --build-arg "VERSION=$version" --build-arg "COMMIT=$commit"
  --build-arg "BUILDPLATFORM=linux/$build_arch")
if [ "${LOCAL_BASES:-}" = 1 ]; then
  while IFS='=' read -r key value; do
    case "$key" in
      BASE_IMAGE) bases[$build_arch]="$value" ;;
      BASE_IMAGE_*) bases[${key#BASE_IMAGE_}]="$value" ;;
      *) common+=(--build-arg "$key=$value") ;;
    esac
  done < <("$here/image-bases.sh" "${arches[@]}")
  common+=(--pull=never)
fi

"$podman" manifest rm "$name" >/dev/null 2>&1 || true
"$podman" manifest create "$name" >/dev/null
for arch in "${arches[@]}"; do
  args=("${common[@]}" --platform "linux/$arch" --build-arg "TARGETARCH=$arch")
  if [ -n "${bases[$arch]:-}" ]; then
    args+=(--build-arg "BASE_IMAGE=${bases[$arch]}")
  fi
  echo "image-multiarch.sh: building linux/$arch" >&2
  "$podman" build --quiet "${args[@]}" -f "$root/Dockerfile.base" -t "$name-$arch" "$root" >/dev/null
  "$podman" manifest add "$name" "containers-storage:$name-$arch" >/dev/null
done
echo "$name"
