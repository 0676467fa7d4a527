#!/usr/bin/env bash
# Prints the name of a local base image for the Containerfile, building it when missing:
# Debian bookworm from Debian's mirror (mmdebstrap; no image registry is reachable from CI's
# machines) and the pinned official Node 22 binary (.ci/node.sh) at /usr/local/bin/node, as the
# official slim image has it. Only what Node and the Containerfile's steps need: Debian's
# essential set (a shell, coreutils) and libstdc++, without documentation or locales, and
# without the usrmerge tool that mmdebstrap uses once (usr-is-merged stands for it) and the
# 47 MB of perl it brings.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=node.sh
source "$here/node.sh"
name="localhost/portfolio-mcp-base:bookworm-node-$NODE_22_VERSION"
if podman image exists "$name"; then
  echo "$name"
  exit 0
fi
bin=$(node_bin 22)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mmdebstrap --quiet --variant=essential --include=libstdc++6,usr-is-merged \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook="copy-in $bin/node /usr/local/bin" \
  --customize-hook='chroot "$1" dpkg --purge usrmerge libfile-find-rule-perl libnumber-compare-perl libtext-glob-perl perl libperl5.36 perl-modules-5.36' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*' \
  bookworm "$work/rootfs.tar" >&2
podman import --quiet --change 'CMD ["node"]' "$work/rootfs.tar" "$name" >/dev/null
echo "$name"
