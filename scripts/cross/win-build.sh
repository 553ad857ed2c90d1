#!/usr/bin/env bash
# Builds the addon for x86_64-pc-windows-gnu (mingw) and puts it where the official node.exe
# looks: eddie-tools-native.win32-x64-msvc.node (official Node and Electron ask for the msvc
# name; a gnu-built binary loads in them). `--release` for a release build (default: debug).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
"$here/win-prepare.sh" >/dev/null
source "$here/env.sh"
profile=debug
args=()
if [[ ${1:-} == --release ]]; then profile=release; args+=(--release); fi
cd "$root"
cargo build --target x86_64-pc-windows-gnu -p eddie_tools_native "${args[@]}"
cp "${CARGO_TARGET_DIR:-target}/x86_64-pc-windows-gnu/$profile/eddie_tools_native.dll" "$root/eddie-tools-native.win32-x64-msvc.node"
echo "built $root/eddie-tools-native.win32-x64-msvc.node ($profile)"
