// Tests that need a program the machine may not have: Chromium (the browser family), ruff (lint
// and format findings). On a machine with only Rust and Node they are skipped, each with the
// reason and the way to install the component; with CI=true (.ci/run) a missing component is a
// failure, never a skip. (redis-server is needed by Rust tests only: crates/eddie_tools_core/tests/memory.rs.)
import { test as nodeTest } from 'node:test'
import { spawnSync } from 'node:child_process'
import * as native from '../index.js'
import { tempDir } from './helpers.mjs'

/** CI=true (or any value but false/0): every component is required. */
export const inCI = !!process.env.CI && !['false', '0'].includes(process.env.CI.toLowerCase())

const HOW = {
  chromium: 'install it (Debian/Ubuntu: apt-get install chromium) or set CHROME_PATH to a Chrome or Chromium binary',
  ruff: 'install it: pip install ruff',
}

function onPath(cmd) {
  const r = spawnSync(cmd, ['--version'], { stdio: 'ignore' })
  return !r.error && r.status === 0
}

const cache = new Map()

/** Whether `name` is here: Chromium as the browser family finds it (browser_status, which launches nothing). */
export async function present(name) {
  if (!cache.has(name)) {
    if (name === 'chromium') {
      const s = await native.browserStatus({}, { cwd: tempDir('eddie-components-') })
      cache.set(name, s.data.mode !== 'none')
    } else if (name in HOW) {
      cache.set(name, onPath(name))
    } else {
      throw new Error(`unknown component ${name}`)
    }
  }
  return cache.get(name)
}

/** The reason a test needing `name` is skipped, or null when it runs. Throws under CI when `name` is missing. */
export async function skipReason(name) {
  if (await present(name)) return null
  const why = `${name} is not installed: skipped; ${HOW[name]} to run it (with CI=true a missing ${name} fails)`
  if (inCI) throw new Error(`${name} is required with CI=true and is not installed; ${HOW[name]}`)
  return why
}

/**
 * `test` for a file whose every test needs `name`. Present: node:test's `test`. Missing: every
 * test is reported as skipped with the reason; under CI, one failing test says what is missing
 * (and the file's own tests run, and fail, as they would).
 * @param {string} name
 * @returns {Promise<typeof nodeTest>}
 */
export async function needs(name) {
  if (await present(name)) return nodeTest
  if (inCI) {
    nodeTest(`${name} is installed (required with CI=true)`, () => {
      throw new Error(`${name} is not installed; ${HOW[name]}`)
    })
    return nodeTest
  }
  const reason = `${name} is not installed: skipped; ${HOW[name]} to run these tests`
  process.stderr.write(`${reason}\n`)
  const skipping = (title, options, fn) => {
    if (typeof options === 'function') [options, fn] = [{}, options]
    return nodeTest(title, { ...options, skip: reason }, fn)
  }
  return /** @type {typeof nodeTest} */ (/** @type {unknown} */ (skipping))
}
