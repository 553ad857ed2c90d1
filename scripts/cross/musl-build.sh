#!/usr/bin/env bash
# `npm run build:musl`: builds linux-x64-musl (and, with `all`, linux-arm64-musl) here with
# cargo-zigbuild, as `napi build -x` does in CI (`-C target-feature=-crt-static`: a cdylib that
# Node's musl build can load), then checks what it needs from the system: no Node on npm is
# built for musl, so the binary cannot be loaded here; `readelf -d` must show musl's loader
# (libc.musl-<arch>.so.1) among its NEEDED libraries and nothing from glibc.
# Usage: musl-build.sh [x86_64|aarch64|all] (default x86_64)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$here/env.sh"
tdir="${CARGO_TARGET_DIR:-$root/target}"
which_arch="${1:-x86_64}"
build() { # arch, platform name
  local arch=$1 name=$2 triple="$1-unknown-linux-musl"
  local var="CARGO_TARGET_$(echo "$triple" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
  export "$var=-C target-feature=-crt-static"
  (cd "$root" && cargo zigbuild --target "$triple" -p eddie_tools_native)
  local out="$tdir/$triple/debug/libeddie_tools_native.so"
  cp "$out" "$root/eddie-tools-native.$name.node"
  local needed; needed=$(readelf -d "$out" | awk '/NEEDED/ {gsub(/[][]/, "", $NF); print $NF}' | paste -sd' ')
  echo "$name: $(du -h "$out" | cut -f1), NEEDED: $needed"
  [[ " $needed " == *" libc.musl-$arch.so.1 "* || " $needed " == *" libc.so "* ]] ||
    { echo "$name does not link musl's libc" >&2; exit 1; }
  if [[ $needed =~ (libc\.so\.6|libpthread|libdl\.so|ld-linux) ]]; then
    echo "$name needs glibc ($needed)" >&2; exit 1
  fi
}
[[ $which_arch == all || $which_arch == x86_64 ]] && build x86_64 linux-x64-musl
[[ $which_arch == all || $which_arch == aarch64 ]] && build aarch64 linux-arm64-musl
exit 0
