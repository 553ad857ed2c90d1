#!/usr/bin/env node
// The package's figures, measured: the binary, the two tarballs, node_modules after an npm
// install of them (scripts/pack-local.mjs), the tool count and the schema bytes. README.md's
// "Figures" table holds the same numbers; __test__/figures.test.mjs checks one against the other.
//
//   node scripts/figures.mjs           # print them
//   node scripts/figures.mjs --json    # as JSON
import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packLocal, platformTriple, projectManifest, root } from './pack-local.mjs'

const require = createRequire(import.meta.url)

/** The section names of an ELF file (a 64-bit little-endian one; [] for anything else). */
export function elfSections(file) {
  const fd = openSync(file, 'r')
  try {
    const read = (pos, len) => {
      const b = Buffer.alloc(len)
      readSync(fd, b, 0, len, pos)
      return b
    }
    const h = read(0, 64)
    if (h.readUInt32BE(0) !== 0x7f454c46 || h[4] !== 2 || h[5] !== 1) return []
    const shoff = Number(h.readBigUInt64LE(0x28))
    const shentsize = h.readUInt16LE(0x3a)
    const shnum = h.readUInt16LE(0x3c)
    const shstrndx = h.readUInt16LE(0x3e)
    const headers = read(shoff, shentsize * shnum)
    const at = (i) => headers.subarray(i * shentsize, (i + 1) * shentsize)
    const strs = at(shstrndx)
    const names = read(Number(strs.readBigUInt64LE(0x18)), Number(strs.readBigUInt64LE(0x20)))
    return Array.from({ length: shnum }, (_, i) => {
      const start = at(i).readUInt32LE(0)
      return names.toString('latin1', start, names.indexOf(0, start))
    })
  } finally {
    closeSync(fd)
  }
}

/** The built binary: its size, and whether it is the release build (stripped: no symbol table). */
export function binary() {
  const file = join(root, `eddie-tools-native.${platformTriple()}.node`)
  if (!existsSync(file)) return null
  const release = process.platform === 'linux' ? !elfSections(file).includes('.symtab') : null
  return { file, bytes: statSync(file).size, release }
}

/** Tool count and the bytes of every tool's name, description and input schema (JSON, UTF-8). */
export function schemas() {
  const specs = require('../index.js').toolSpecs()
  const raw = specs.map((s) => ({ name: s.name, description: s.description, parameters: s.jsonSchema }))
  return { tools: specs.length, schemaBytes: Buffer.byteLength(JSON.stringify(raw)) }
}

function duBytes(dir) {
  const r = spawnSync('du', ['-sk', dir], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`du ${dir}: ${r.stderr}`)
  return Number.parseInt(r.stdout, 10) * 1024
}

/** Every figure; packs and installs into a temporary directory (removed after). */
export function measure() {
  const bin = binary()
  if (!bin) throw new Error('build first (npm run build)')
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'eddie-figures-')))
  try {
    const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }
    const { main, plat } = packLocal(tmp, env)
    const app = join(tmp, 'app')
    mkdirSync(app)
    writeFileSync(join(app, 'package.json'), JSON.stringify(projectManifest(main, plat)))
    const install = spawnSync('npm', ['install', '--prefer-offline'], { cwd: app, env, encoding: 'utf8' })
    if (install.status !== 0) throw new Error(`npm install: ${install.stderr}`)
    return {
      binaryBytes: bin.bytes,
      release: bin.release,
      mainTarballBytes: main.size,
      mainUnpackedBytes: main.unpackedSize,
      platformTarballBytes: plat.size,
      nodeModulesBytes: duBytes(join(app, 'node_modules')),
      ...schemas(),
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

/**
 * `require('@eddie/tools-native')` in `n` fresh Node processes, timed inside each with
 * process.hrtime: the median and the slowest, in ms. Printed, never checked (no timing in tests).
 */
export function requireMs(n = 10, dir = root) {
  const times = []
  for (let i = 0; i < n; i++) {
    const r = spawnSync(process.execPath, ['-e', 'const t = process.hrtime.bigint(); require(process.argv[1]); console.log(Number(process.hrtime.bigint() - t) / 1e6)', join(dir, 'index.js')], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`require failed: ${r.stderr}`)
    times.push(Number(r.stdout))
  }
  times.sort((a, b) => a - b)
  return { median: times[Math.floor(n / 2)], max: times[n - 1] }
}

const MB = (b) => `${(b / 1e6).toFixed(1)} MB`
const kB = (b) => `${Math.round(b / 1e3)} kB`

/** The README's table rows, [label, value], as this script prints them. */
export function rows(f) {
  return [
    [`binary (${platformTriple()}, unpacked)`, MB(f.binaryBytes)],
    ['@eddie/tools-native tarball', kB(f.mainTarballBytes)],
    [`@eddie/tools-native-${platformTriple()} tarball`, MB(f.platformTarballBytes)],
    ['node_modules after `npm install`', MB(f.nodeModulesBytes)],
    ['tools', String(f.tools)],
    ['schema bytes (all tools: name, description, input schema)', kB(f.schemaBytes)],
  ]
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const f = measure()
  if (process.argv.includes('--json')) console.log(JSON.stringify(f, null, 2))
  else {
    if (!f.release) console.log('(not the release binary: `npm run build` first for the shipped figures)')
    for (const [label, value] of rows(f)) console.log(`| ${label} | ${value} |`)
    const t = requireMs()
    console.log(`require() over 10 fresh processes: median ${t.median.toFixed(1)} ms, slowest ${t.max.toFixed(1)} ms (not in the README table)`)
  }
}
