// The two tarballs a consumer installs, made locally as the release makes them (no registry):
// - this platform's package: npm/<platform>/package.json and the binary built here, as
//   `napi artifacts` lays it out;
// - @eddie/tools-native: `npm pack` of the clone, then, as `napi pre-publish` does before
//   publishing, the platform package added to its optionalDependencies.
// A project installs the main tarball and maps the platform package to its tarball with its
// package manager's overrides (`projectManifest`). Used by __test__/pack.test.mjs (npm) and
// scripts/check-installs.mjs (npm, pnpm, bun, yarn).
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
export const { platformTriple, platformPackage } = require('./platform.js')
export const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version

function run(cmd, args, cwd, env) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8' })
  if (r.error) throw r.error
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}: ${r.stderr}`)
  return r
}

/** `npm pack` of `dir` into `dest`: the tarball's path, sizes and file list. */
export function npmPack(dir, dest, env = process.env, extra = []) {
  const r = run('npm', ['pack', '--json', '--pack-destination', dest, ...extra], dir, env)
  const [info] = JSON.parse(r.stdout.slice(r.stdout.indexOf('[')))
  return { file: join(dest, info.filename), size: info.size, unpackedSize: info.unpackedSize, files: info.files.map((f) => f.path) }
}

/**
 * Packs both packages into `dest` (which must exist). Throws when the binary is not built.
 * @returns {{main: ReturnType<typeof npmPack>, plat: ReturnType<typeof npmPack>}}
 */
export function packLocal(dest, env = process.env) {
  const triple = platformTriple()
  const binary = join(root, `eddie-tools-native.${triple}.node`)
  const template = join(root, 'npm', triple, 'package.json')
  if (!existsSync(binary)) throw new Error(`build first (npm run build): ${binary} is missing`)
  if (!existsSync(template)) throw new Error(`npm/${triple}/package.json is missing (napi create-npm-dirs)`)

  const platDir = join(dest, 'platform')
  mkdirSync(platDir)
  copyFileSync(template, join(platDir, 'package.json'))
  copyFileSync(binary, join(platDir, `eddie-tools-native.${triple}.node`))
  const plat = npmPack(platDir, dest, env)

  // npm pack of the clone, unpacked, given its optionalDependencies, packed again.
  const first = join(dest, 'first')
  mkdirSync(first)
  const packed = npmPack(root, first, env)
  run('tar', ['-xzf', packed.file, '-C', first], first, env)
  const staged = join(first, 'package')
  const manifest = JSON.parse(readFileSync(join(staged, 'package.json'), 'utf8'))
  manifest.optionalDependencies = { ...manifest.optionalDependencies, [platformPackage()]: version }
  writeFileSync(join(staged, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  const main = npmPack(staged, dest, env, ['--ignore-scripts'])
  return { main, plat }
}

/** A consumer project's package.json: the main tarball as a dependency, the platform package mapped to its tarball. */
export function projectManifest(main, plat) {
  const pin = { [platformPackage()]: `file:${plat.file}` }
  return {
    name: 'app',
    version: '1.0.0',
    private: true,
    dependencies: { '@eddie/tools-native': `file:${main.file}` },
    overrides: pin, // npm, bun
    resolutions: pin, // yarn, bun
    pnpm: { overrides: pin },
  }
}
