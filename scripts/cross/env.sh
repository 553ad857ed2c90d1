# Source me: the environment cross builds of this repo need. `source scripts/cross/env.sh`.
# Sets the mingw tools for x86_64-pc-windows-gnu (C dependencies: libgit2, SQLite, ring,
# tree-sitter) and LIBNODE_PATH (napi-build wants an import library of node.exe; see win-libnode.sh),
# the macOS deployment targets, and puts pip's zig on PATH for cargo-zigbuild.
EDDIE_CROSS_CACHE="${EDDIE_CROSS_CACHE:-$HOME/.cache/eddie-cross}"
export EDDIE_CROSS_CACHE
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc
export CXX_x86_64_pc_windows_gnu=x86_64-w64-mingw32-g++
export AR_x86_64_pc_windows_gnu=x86_64-w64-mingw32-ar
export LIBNODE_PATH="$EDDIE_CROSS_CACHE/libnode"
# Without these the Mach-O minimum comes out as the newest macOS zig knows.
export MACOSX_DEPLOYMENT_TARGET="${MACOSX_DEPLOYMENT_TARGET:-11.0}"
# zig from the `ziglang` wheel, for cargo-zigbuild
if ! command -v zig >/dev/null 2>&1; then
  _zig_dir="$(python3 -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__))' 2>/dev/null || true)"
  [[ -n $_zig_dir ]] && export PATH="$_zig_dir:$PATH"
  unset _zig_dir
fi
