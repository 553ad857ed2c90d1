// Pack and install as a consumer would: the package tarball (with the optionalDependencies
// `napi pre-publish` adds) plus this platform's prebuilt package (made from
// npm/<platform>/package.json and the locally built binary), installed into a clean project with
// cargo removed from PATH. The package has no install script and ships no Rust sources: nothing
// may compile; tools run from ESM and CJS. scripts/check-installs.mjs does the same with pnpm,
// bun and yarn.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { packLocal, platformPackage, platformTriple, projectManifest, version } from '../scripts/pack-local.mjs'

// PATH without any directory that has cargo (or rustc) in it.
const PATH = process.env.PATH.split(delimiter)
  .filter((d) => !existsSync(join(d, 'cargo')) && !existsSync(join(d, 'rustc')))
  .join(delimiter)
const env = { ...process.env, PATH, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }
delete env.CARGO_TARGET_DIR

function sh(cmd, args, cwd, opts = {}) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', ...opts })
  if (r.error) throw r.error
  return r
}

function npm(args, cwd) {
  return sh('npm', args, cwd)
}

const triple = platformTriple()

test('pack, then install with no cargo on PATH: prebuilt binary, no install script, no compile, ESM and CommonJS', { timeout: 300_000 }, (t) => {
  assert.notEqual(sh('sh', ['-c', 'command -v cargo'], process.cwd()).status, 0, 'cargo is still on PATH')
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'eddie-pack-')))
  const { main, plat } = packLocal(tmp, env)
  assert.deepEqual(plat.files.sort(), [`eddie-tools-native.${triple}.node`, 'package.json'])

  for (const f of ['index.js', 'index.d.ts', 'binding.js', 'binding.d.ts', 'bin/eddie-tools.js', 'scripts/platform.js'])
    assert.ok(main.files.includes(f), `${f} is shipped`)
  for (const f of main.files) {
    assert.doesNotMatch(f, /^(target|node_modules|__test__|bench|npm|src|crates)\//, `${f} is not for consumers`)
    assert.doesNotMatch(f, /\.node$/, `${f}: binaries come from the platform package`)
    assert.doesNotMatch(f, /\.rs$|^Cargo\.(toml|lock)$|^build\.rs$/, `${f}: no Rust sources are shipped`)
  }
  const manifest = JSON.parse(readFileSync(join(tmp, 'first', 'package', 'package.json'), 'utf8'))
  for (const hook of ['preinstall', 'install', 'postinstall'])
    assert.equal(manifest.scripts?.[hook], undefined, `the package has no ${hook} script`)
  t.diagnostic(`tarballs: @eddie/tools-native ${(main.size / 1024).toFixed(0)} kB (${(main.unpackedSize / 1024).toFixed(0)} kB unpacked, ${main.files.length} files); ${platformPackage()} ${(plat.size / 1024).toFixed(0)} kB (${(plat.unpackedSize / 1024 / 1024).toFixed(1)} MB unpacked)`)

  const app = join(tmp, 'app')
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), JSON.stringify(projectManifest(main, plat)))
  const started = Date.now()
  const install = npm(['install', '--no-audit', '--no-fund', '--prefer-offline'], app)
  assert.equal(install.status, 0, install.stderr)
  t.diagnostic(`install of the two tarballs: ${Date.now() - started} ms`)
  const installed = join(app, 'node_modules', '@eddie', 'tools-native')
  assert.ok(!existsSync(join(installed, 'target')), 'nothing was compiled into node_modules')
  assert.ok(!existsSync(join(installed, `eddie-tools-native.${triple}.node`)), 'the binary came from the platform package')
  assert.ok(existsSync(join(app, 'node_modules', '@eddie', `tools-native-${triple}`)), 'the optional dependency was installed')
  assert.deepEqual(readdir(join(app, 'node_modules', '.bin')), ['eddie-tools'], 'no build tooling lands in .bin')

  writeFileSync(join(app, 'a.txt'), 'hello\n')
  const cjs = sh(process.execPath, ['-e', `
    const t = require('@eddie/tools-native')
    t.readFile({ path: 'a.txt' }, { cwd: process.cwd() }).then((r) => console.log(JSON.stringify(r.data.content ?? r.content)))
  `], app)
  assert.equal(cjs.status, 0, cjs.stderr)
  assert.match(cjs.stdout, /hello/)
  const esm = sh(process.execPath, ['--input-type=module', '-e', `
    import { grep, builtinTools } from '@eddie/tools-native'
    const r = await grep({ pattern: 'hel+o' }, { cwd: process.cwd() })
    console.log(builtinTools.length, r.data.matches[0].path)
  `], app)
  assert.equal(esm.status, 0, esm.stderr)
  assert.equal(esm.stdout.trim(), '13 a.txt')
  const cli = sh(join(app, 'node_modules', '.bin', 'eddie-tools'), ['--version'], app)
  assert.equal(cli.stdout.trim(), version)

  // Without the platform package (--omit=optional) and without cargo: the install succeeds (it
  // runs nothing) and the require says why nothing loads and the ways out.
  const bare = join(tmp, 'bare')
  mkdirSync(bare)
  writeFileSync(join(bare, 'package.json'), JSON.stringify({ name: 'bare', version: '1.0.0', private: true }))
  const quiet = npm(['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', main.file], bare)
  assert.equal(quiet.status, 0, quiet.stderr)
  assert.ok(!existsSync(join(bare, 'node_modules', '@eddie', `tools-native-${triple}`)))
  const load = sh(process.execPath, ['-e', `
    try { require('@eddie/tools-native') } catch (e) { console.log(e.code); console.log(e.message) }
  `], bare)
  assert.match(load.stdout, /^NATIVE_BINDING_NOT_FOUND\n/)
  assert.match(load.stdout, new RegExp(`${triple}.*\\n.*${platformPackage().replace('/', '\\/')}`))
  assert.match(load.stdout, /npm install @eddie\/tools-native-/)
  assert.match(load.stdout, /Ways out:/)
})

function readdir(dir) {
  return existsSync(dir) && statSync(dir).isDirectory() ? readdirSync(dir).sort() : []
}
