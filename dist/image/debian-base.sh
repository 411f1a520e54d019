#!/bin/sh
# Makes a Debian 12 (bookworm) base image from Debian's packages and imports it into podman, for a host that reaches
# Debian's package mirrors but no container registry: mmdebstrap's minbase variant (essential packages and apt), less
# the manuals, documentation and translations, as debian:bookworm-slim leaves them out. The mirrors are the host's
# own apt sources. Needs root, mmdebstrap and podman (apt-get install mmdebstrap podman); about a minute and a half.
#   dist/image/debian-base.sh [NAME]     (default NAME: localhost/sluice-base:bookworm)
# Then: SLUICE_BASE=localhost/sluice-base:bookworm dist/image/build.sh
set -eu
name=${1:-localhost/sluice-base:bookworm}

sources=
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  if [ -s "$f" ]; then sources=$f && break; fi
done
if [ -z "$sources" ]; then
  echo "debian-base.sh: no apt sources on this host (/etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list)" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
mmdebstrap --variant=minbase \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  bookworm "$work/base.tar" "$sources" </dev/null
podman import --change 'CMD ["bash"]' "$work/base.tar" "$name"
echo "debian-base.sh: imported $name"
