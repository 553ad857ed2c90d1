#!/usr/bin/env node
// `npm install` in a clone builds the addon: npm (and pnpm) run a package's `prepare` script for
// the project being installed, never for a dependency from the registry, so the published package
// runs nothing at install time (its binary is the optional dependency @eddie/tools-native-<platform>).
//
// - In a clone (a .git next to package.json): `napi build` in the dev profile, then index.js and
//   index.d.ts are regenerated. The dev build is the one `npm test` uses: `cargo test` reuses its
//   compiled dependencies instead of compiling everything a second time. `npm run build` makes
//   the release binary (LTO, stripped), the one the platform packages ship.
// - Nothing for `npm pack` / `npm publish` (which also run `prepare`), outside a clone, or when
//   the clone is installed into another project (`npm install /path/to/clone` run there: npm's
//   INIT_CWD is that project), so that a release binary built in the clone stays as it is.
'use strict'
const { spawnSync } = require('node:child_process')
const { existsSync, realpathSync } = require('node:fs')
const { isAbsolute, join, relative } = require('node:path')

const root = realpathSync(join(__dirname, '..'))

function main() {
  if (!existsSync(join(root, '.git'))) return
  if (['pack', 'publish'].includes(process.env.npm_command ?? '')) return
  const invokedIn = process.env.INIT_CWD
  if (invokedIn && existsSync(invokedIn)) {
    const rel = relative(root, realpathSync(invokedIn))
    if (rel.startsWith('..') || isAbsolute(rel)) return
  }
  const cargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' })
  if (cargo.error || cargo.status !== 0) {
    process.stderr.write('@eddie/tools-native: building the addon in a clone needs Rust stable (cargo): https://rustup.rs\n')
    process.exit(1)
  }
  const r = spawnSync('npm', ['run', 'build:debug'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' })
  if (r.error) throw r.error
  process.exit(r.status ?? 1)
}

main()
