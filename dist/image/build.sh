#!/bin/sh
# Builds Sluice's container image (dist/image/Dockerfile) from the tarball the Maven build made:
#   ./mvnw -B package -pl dist -am -Dmaven.test.skip=true && dist/image/build.sh
# Settings, as environment variables:
#   SLUICE_IMAGE       the image's name (default sluice:VERSION, the version of the tarball)
#   SLUICE_BASE        the base image (default debian:bookworm-slim, pulled from a registry); on a host that reaches
#                      Debian's package mirrors but no registry, dist/image/debian-base.sh makes one from Debian's
#                      packages: SLUICE_BASE=localhost/sluice-base:bookworm dist/image/build.sh
#   SLUICE_BUILDER     podman or docker (default: podman if there is one, else docker)
#   SLUICE_BUILD_OPTS  more options for the build command, split at spaces (e.g. "--runtime runc")
set -eu
here=$(cd "$(dirname "$0")" && pwd -P)
target=$here/../target

count=0
for f in "$target"/sluice-*-linux-x86_64.tar.gz; do
  [ -f "$f" ] || continue
  tarball=$f
  count=$((count + 1))
done
if [ "$count" -ne 1 ]; then
  echo "build.sh: expected one sluice-VERSION-linux-x86_64.tar.gz in $target, found $count:" \
    "run ./mvnw -B package -pl dist -am -Dmaven.test.skip=true first (after ./mvnw clean if there are several)" >&2
  exit 1
fi
name=${tarball##*/}
version=${name#sluice-}
version=${version%-linux-x86_64.tar.gz}

builder=${SLUICE_BUILDER:-}
if [ -z "$builder" ]; then
  if command -v podman >/dev/null 2>&1; then builder=podman; else builder=docker; fi
fi
image=${SLUICE_IMAGE:-sluice:$version}

# the build context: the tarball alone (not the whole of target/, which docker would send to its daemon)
context=$(mktemp -d "${TMPDIR:-/tmp}/sluice-image.XXXXXX")
trap 'rm -rf "$context"' EXIT
cp "$tarball" "$context/"

set -f
# shellcheck disable=SC2086 # SLUICE_BUILD_OPTS: several options
"$builder" build ${SLUICE_BUILD_OPTS:-} \
  --build-arg "BASE=${SLUICE_BASE:-debian:bookworm-slim}" \
  --build-arg "SLUICE_VERSION=$version" \
  --file "$here/Dockerfile" \
  --tag "$image" \
  "$context"
echo "build.sh: built $image from $name"
