#!/usr/bin/env bash
# Prints the name of a local image holding Debian's redis-server and nginx, building it when
# missing: CI's stand-in for the public Redis and nginx images that deploy/compose.yaml names
# (REDIS_IMAGE, PROXY_IMAGE), which no registry reachable from CI's machines serves.
set -euo pipefail
name="localhost/portfolio-mcp-ci-services:bookworm"
if podman image exists "$name"; then
  echo "$name"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mmdebstrap --quiet --variant=essential --include=redis-server,nginx-light,usr-is-merged \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  bookworm "$work/rootfs.tar" >&2
podman import --quiet "$work/rootfs.tar" "$name" >/dev/null
echo "$name"
