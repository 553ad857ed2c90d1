// README.md's "Figures" table against what scripts/figures.mjs measures: counts exactly, sizes
// within 10 %. The sizes are the release binary's (`npm run build`); with the dev build that
// `npm install` makes in a clone they are skipped, saying so, and with CI=true that fails.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { binary, measure, rows, schemas } from '../scripts/figures.mjs'
import { inCI } from './components.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The README's figures table: label -> value. */
function readmeFigures() {
  const text = readFileSync(join(root, 'README.md'), 'utf8')
  const start = text.indexOf('<!-- figures -->')
  const end = text.indexOf('<!-- /figures -->')
  assert.ok(start >= 0 && end > start, 'README.md has a <!-- figures --> ... <!-- /figures --> table')
  const table = new Map()
  for (const line of text.slice(start, end).split('\n')) {
    const m = /^\| (.+?) \| ([^|]+?) \|$/.exec(line)
    if (m && !/^-+$/.test(m[2]) && m[1] !== 'figure') table.set(m[1], m[2])
  }
  return table
}

/** `14.2 MB` / `120 kB` / `104` as a number (bytes for sizes). */
function value(s) {
  const m = /^([\d.]+)(?: (kB|MB))?$/.exec(s)
  assert.ok(m, `not a figure: ${s}`)
  return Number(m[1]) * (m[2] === 'MB' ? 1e6 : m[2] === 'kB' ? 1e3 : 1)
}

function check(actual) {
  const readme = readmeFigures()
  for (const [label, measured] of actual) {
    assert.ok(readme.has(label), `README figures: no row "${label}" (it is ${measured} here)`)
    const [want, got] = [value(readme.get(label)), value(measured)]
    if (/\b(kB|MB)$/.test(measured)) {
      assert.ok(Math.abs(got - want) <= want * 0.1, `${label}: README says ${readme.get(label)}, measured ${measured} (more than 10 % apart): update the README (node scripts/figures.mjs)`)
    } else {
      assert.equal(got, want, `${label}: README says ${readme.get(label)}, measured ${measured}`)
    }
  }
}

test('README figures: tool count and schema bytes', () => {
  const all = rows({ binaryBytes: 0, mainTarballBytes: 0, platformTarballBytes: 0, nodeModulesBytes: 0, ...schemas() })
  check(all.filter(([label]) => label === 'tools' || label.startsWith('schema bytes')))
})

test('README figures: binary, tarballs and node_modules of the release build', { timeout: 300_000 }, (t) => {
  const bin = binary()
  assert.ok(bin, 'no binary built')
  if (bin.release === false) {
    const why = 'the binary here is the dev build (npm install in a clone); `npm run build` makes the release one these figures are about'
    if (inCI) assert.fail(`with CI=true the release figures are checked: ${why}`)
    return t.skip(why)
  }
  const f = measure()
  const all = rows(f)
  t.diagnostic(all.map(([l, v]) => `${l}: ${v}`).join('; '))
  check(all)
})
