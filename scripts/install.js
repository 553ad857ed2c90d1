#!/usr/bin/env node
// The package's install step.
//
// - A consumer of the published package gets its binary from the per-platform package (an
//   optional dependency, see package.json `napi.targets`): this script checks that it loads and
//   stops. Nothing compiles.
// - No binary loads, cargo is on PATH and the sources are here: the fallback builds from source,
//   with the build directory in the user's cache (never a target/ inside node_modules).
// - No binary and no cargo: the install fails with what was looked for and the two ways out.
// - In a clone (a .git next to package.json), or with EDDIE_TOOLS_BUILD_FROM_SOURCE=1, it builds
//   from source with napi (the development path: `npm install` then `npm test`).
'use strict'
const { spawnSync } = require('node:child_process')
const { copyFileSync, existsSync, mkdirSync, renameSync } = require('node:fs')
const { homedir } = require('node:os')
const { join } = require('node:path')
const { loadFailureMessage, platformTriple } = require('./platform.js')

const root = join(__dirname, '..')

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts })
  if (r.error) throw r.error
  if (r.status !== 0) process.exit(r.status ?? 1)
}

/** Whether the binding loads, tried in a child so that a failed load leaves nothing behind. */
function loads() {
  const r = spawnSync(process.execPath, ['-e', "require('./binding.js').errorCodes()"], { cwd: root, stdio: 'ignore' })
  return r.status === 0
}

function onPath(cmd) {
  const r = spawnSync(cmd, ['--version'], { stdio: 'ignore' })
  return !r.error && r.status === 0
}

function developmentBuild() {
  const napi = join(root, 'node_modules', '.bin', 'napi')
  if (!existsSync(napi)) return false
  run(napi, ['build', '--platform', '--release', '--js', 'binding.js', '--dts', 'target/napi/binding.d.ts'])
  run(process.execPath, [join(root, 'scripts', 'gen-index.mjs')])
  return true
}

/** cargo alone (a consumer has no @napi-rs/cli): build the cdylib and put it where binding.js looks. */
function fallbackBuild() {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache')
  const targetDir = process.env.CARGO_TARGET_DIR || join(cache, 'eddie-tools-native', 'target')
  mkdirSync(targetDir, { recursive: true })
  process.stderr.write(`@eddie/tools-native: no prebuilt binary for ${platformTriple()}; building from source (a few minutes; build directory ${targetDir})\n`)
  run('cargo', ['build', '--release', '--locked', '--lib', '-p', 'eddie_tools_native', '--target-dir', targetDir])
  const lib = process.platform === 'darwin' ? 'libeddie_tools_native.dylib' : process.platform === 'win32' ? 'eddie_tools_native.dll' : 'libeddie_tools_native.so'
  const dest = join(root, `eddie-tools-native.${platformTriple()}.node`)
  copyFileSync(join(targetDir, 'release', lib), `${dest}.tmp`)
  renameSync(`${dest}.tmp`, dest)
}

function main() {
  const clone = existsSync(join(root, '.git'))
  if (clone || process.env.EDDIE_TOOLS_BUILD_FROM_SOURCE === '1') {
    if (!onPath('cargo')) {
      process.stderr.write('@eddie/tools-native: building from source needs Rust stable (cargo): https://rustup.rs\n')
      process.exit(1)
    }
    if (!developmentBuild()) fallbackBuild()
    return
  }
  if (loads()) return
  if (onPath('cargo') && existsSync(join(root, 'Cargo.toml'))) {
    fallbackBuild()
    if (loads()) return
  }
  process.stderr.write(`${loadFailureMessage()}\n`)
  process.exit(1)
}

main()
