#!/usr/bin/env node
// Installs the locally packed package (scripts/pack-local.mjs: the main tarball with its
// optionalDependencies, and this platform's binary package) into a clean project with each
// package manager at its default settings, with cargo off PATH, then requires it and runs a tool.
// Every install must exit 0 and every call must work. Needs a built binary (`npm run build`) and
// the registry (the managers are fetched with npx; the package itself needs no other package).
//
//   node scripts/check-installs.mjs                 # all of them
//   node scripts/check-installs.mjs npm pnpm@9      # some
//
// Prints one line per manager and exits 1 when any failed.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { packLocal, platformPackage, projectManifest } from './pack-local.mjs'

const npx = (pkg, ...args) => ['npx', ['-y', pkg, ...args]]
/** name -> [install command, how to run node in the project] */
const MANAGERS = {
  npm: { install: ['npm', ['install']], node: ['node', []] },
  'npm --ignore-scripts': { install: ['npm', ['install', '--ignore-scripts']], node: ['node', []] },
  'pnpm@9': { install: npx('pnpm@9', 'install'), node: ['node', []] },
  'pnpm@10': { install: npx('pnpm@10', 'install'), node: ['node', []] },
  'pnpm@latest': { install: npx('pnpm@latest', 'install'), node: ['node', []] },
  'bun@1': { install: npx('bun@1', 'install'), node: ['node', []] },
  // yarn berry with its defaults: Plug'n'Play, so the script runs through `yarn node`
  'yarn@4': { install: npx('@yarnpkg/cli-dist@4', 'install'), node: npx('@yarnpkg/cli-dist@4', 'node') },
}

const wanted = process.argv.slice(2)
for (const w of wanted) if (!MANAGERS[w]) throw new Error(`unknown manager ${w}; known: ${Object.keys(MANAGERS).join(', ')}`)
const names = wanted.length ? wanted : Object.keys(MANAGERS)

const PATH = process.env.PATH.split(delimiter)
  .filter((d) => !existsSync(join(d, 'cargo')) && !existsSync(join(d, 'rustc')))
  .join(delimiter)
const env = {
  ...process.env,
  PATH,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  // yarn makes installs immutable under CI=true; these projects have no lockfile yet
  YARN_ENABLE_IMMUTABLE_INSTALLS: 'false',
  YARN_ENABLE_TELEMETRY: '0',
}
delete env.CARGO_TARGET_DIR

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'eddie-installs-')))
const { main, plat } = packLocal(tmp, env)
console.log(`@eddie/tools-native ${(main.size / 1024).toFixed(0)} kB, ${platformPackage()} ${(plat.size / 1024 / 1024).toFixed(2)} MB (tarballs)`)

const probe = `
const t = require('@eddie/tools-native')
t.readFile({ path: 'a.txt' }, { cwd: process.cwd() }).then((r) => {
  if (!String(r.content).includes('hello from a.txt')) throw new Error('unexpected result: ' + r.content)
  console.log('ok ' + t.allTools.length + ' tools')
})
`

let failed = 0
for (const name of names) {
  const m = MANAGERS[name]
  const app = join(tmp, name.replace(/[^a-z0-9]+/gi, '-'))
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), JSON.stringify(projectManifest(main, plat), null, 2))
  // pnpm >= 11 reads overrides from pnpm-workspace.yaml only (older ones read package.json's "pnpm")
  writeFileSync(join(app, 'pnpm-workspace.yaml'), `packages:\n  - '.'\noverrides:\n  '${platformPackage()}': 'file:${plat.file}'\n`)
  writeFileSync(join(app, 'a.txt'), 'hello from a.txt\n')
  const started = Date.now()
  const install = spawnSync(m.install[0], m.install[1], { cwd: app, env, encoding: 'utf8' })
  const ms = Date.now() - started
  const [cmd, args] = m.node
  const call = install.status === 0 ? spawnSync(cmd, [...args, '-e', probe], { cwd: app, env, encoding: 'utf8' }) : null
  const ok = install.status === 0 && call?.status === 0 && /^ok \d+ tools/m.test(call.stdout)
  if (!ok) failed++
  const du = spawnSync('du', ['-sk', join(app, 'node_modules')], { encoding: 'utf8' })
  const size = du.status === 0 ? `${(Number.parseInt(du.stdout, 10) / 1024).toFixed(1)} MB node_modules` : 'no node_modules'
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}: install exit ${install.status} in ${(ms / 1000).toFixed(1)} s, ${size}; call: ${call ? (call.stdout.trim() || call.stderr.trim().split('\n').pop()) : 'not run'}`)
  if (!ok) {
    process.stdout.write(`--- ${name} install stderr ---\n${install.stderr}\n${install.stdout.slice(-2000)}\n`)
    if (call) process.stdout.write(`--- ${name} call ---\n${call.stdout}\n${call.stderr}\n`)
  }
}
if (!process.env.KEEP) rmSync(tmp, { recursive: true, force: true })
else console.log(`kept ${tmp}`)
process.exit(failed ? 1 : 0)
