#!/usr/bin/env bash
# Links the addon for macOS here (no SDK, no Mac): `cargo zigbuild` for aarch64-apple-darwin
# and/or x86_64-apple-darwin, against framework stubs (.tbd) generated from the symbols the link
# leaves undefined:
#   pass 1: empty Security/CoreFoundation/SystemConfiguration stubs; napi links macOS addons
#           with `-undefined dynamic_lookup`, so the link succeeds and leaves the framework
#           symbols to dynamic lookup (`llvm-nm -m -u` shows them without `(from <library>)`);
#   stubs:  those symbols, sorted into their framework by prefix (Sec, Authorization, CMS, SSL:
#           Security; CF: CoreFoundation; SC: SystemConfiguration; and their k constants);
#           anything else left undefined must be Node's (napi_*, node_api_*), or this fails;
#   pass 2: the same link against the full stubs; then no framework symbol may be left to
#           dynamic lookup (llvm-nm -m), and each framework must be a load command.
# The binary cannot run here; the release workflow tests it on macos-14/macos-13.
# Usage: mac-build.sh [aarch64|x86_64|all] (default all); --release for a release build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$here/env.sh"
which_arch="${1:-all}"
profile=debug; cargo_profile=()
for a in "$@"; do [[ $a == --release ]] && { profile=release; cargo_profile=(--release); }; done
[[ $which_arch == --release ]] && which_arch=all
stubs="$EDDIE_CROSS_CACHE/macos-frameworks"
tdir="${CARGO_TARGET_DIR:-$root/target}"
FRAMEWORKS=(Security CoreFoundation SystemConfiguration)

framework_of() { # symbol -> framework name, or empty
  case "$1" in
    _Sec* | _kSec* | _Authorization* | _CMS* | _kCMS* | _SSL* | _kSSL*) echo Security ;;
    _CF* | _kCF* | ___CFConstantStringClassReference) echo CoreFoundation ;;
    _SC* | _kSC*) echo SystemConfiguration ;;
  esac
}

write_tbd() { # framework, symbols file
  local fw=$1 syms=$2 dir="$stubs/$1.framework"
  mkdir -p "$dir"
  {
    echo '--- !tapi-tbd'
    echo 'tbd-version:     4'
    echo 'targets:         [ x86_64-macos, arm64-macos ]'
    echo "install-name:    '/System/Library/Frameworks/$fw.framework/Versions/A/$fw'"
    echo 'current-version: 1'
    if [[ -s $syms ]]; then
      echo 'exports:'
      echo '  - targets:         [ x86_64-macos, arm64-macos ]'
      echo "    symbols:         [ $(paste -sd, "$syms" | sed 's/,/, /g') ]"
    fi
    echo '...'
  } > "$dir/$fw.tbd"
}

looked_up() { # dylib -> the undefined symbols bound to no library (left to dynamic lookup)
  llvm-nm -m -u "$1" | grep -v '(from ' | awk '{print $NF}' | sort -u
}

link() { # triple
  local triple=$1
  RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-F$stubs" \
    cargo zigbuild --target "$triple" -p eddie_tools_native "${cargo_profile[@]}"
}

build() { # triple, deployment target
  local triple=$1 out="$tdir/$1/$profile/libeddie_tools_native.dylib"
  export MACOSX_DEPLOYMENT_TARGET=$2
  rm -rf "$stubs"
  for fw in "${FRAMEWORKS[@]}"; do write_tbd "$fw" /dev/null; done
  touch "$root/src/lib.rs" # relink against the empty stubs
  link "$triple"
  local work; work=$(mktemp -d)
  looked_up "$out" > "$work/looked-up"
  : > "$work/other"
  for fw in "${FRAMEWORKS[@]}"; do : > "$work/$fw"; done
  while read -r sym; do
    fw=$(framework_of "$sym")
    if [[ -n $fw ]]; then echo "$sym" >> "$work/$fw"
    elif [[ ! $sym =~ ^_(napi|node_api)_ ]]; then echo "$sym" >> "$work/other"; fi
  done < "$work/looked-up"
  if [[ -s $work/other ]]; then
    echo "undefined symbols that belong to no known framework:" >&2; cat "$work/other" >&2; exit 1
  fi
  for fw in "${FRAMEWORKS[@]}"; do
    write_tbd "$fw" "$work/$fw"
    echo "$fw: $(grep -c . "$work/$fw" || true) symbols"
  done
  # Relink: rustc's fingerprint does not see the stubs, so force the final link only.
  touch "$root/src/lib.rs"
  link "$triple"
  local left
  left=$(looked_up "$out" | grep -vE '^_(napi|node_api)_' || true)
  if [[ -n $left ]]; then echo "still looked up dynamically after the stubs: $left" >&2; exit 1; fi
  for fw in "${FRAMEWORKS[@]}"; do
    llvm-objdump --macho --dylibs-used "$out" | grep -q "/$fw.framework/" || { echo "no load command for $fw" >&2; exit 1; }
  done
  local name; name=$([[ $triple == aarch64* ]] && echo darwin-arm64 || echo darwin-x64)
  cp "$out" "$root/eddie-tools-native.$name.node"
  echo "linked $root/eddie-tools-native.$name.node ($(llvm-objdump --macho --private-header "$out" | awk '$1 == "MH_MAGIC_64" {print $2}'), minos $MACOSX_DEPLOYMENT_TARGET)"
  rm -rf "$work"
}

[[ $which_arch == all || $which_arch == aarch64 ]] && build aarch64-apple-darwin 11.0
[[ $which_arch == all || $which_arch == x86_64 ]] && build x86_64-apple-darwin 10.15
exit 0
