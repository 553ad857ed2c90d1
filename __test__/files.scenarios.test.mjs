// Scenario folders for the `files` family: __test__/scenarios/<name>/{input/, request.json, expected/}.
// The input tree is copied into a fresh workspace, the request is run, and the workspace must then equal
// expected/ byte for byte (for a refused request, expected/ is the untouched input).
// crates/eddie_tools_core/tests/scenarios.rs runs the same folders through the Rust core with the
// same expectations: a new request.json key must be taught to both.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, dirname, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as tools from '../index.js'
import { workspace, context } from './helpers.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, 'scenarios')

function tree(dir) {
  const out = {}
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name)
      if (statSync(p).isDirectory()) walk(p)
      else out[relative(dir, p)] = readFileSync(p).toString('hex')
    }
  }
  walk(dir)
  return out
}

/** `actual` contains `expected` (objects by key, arrays element-wise by index). */
function contains(actual, expected, at = 'data') {
  if (expected === null || typeof expected !== 'object') return assert.deepEqual(actual, expected, at)
  assert.ok(actual !== null && typeof actual === 'object', `${at} is an object`)
  for (const [k, v] of Object.entries(expected)) contains(actual[k], v, `${at}.${k}`)
}

for (const name of readdirSync(root).filter((n) => statSync(join(root, n)).isDirectory()).sort()) {
  test(`scenario ${name}`, async () => {
    const dir = join(root, name)
    const req = JSON.parse(readFileSync(join(dir, 'request.json'), 'utf8'))
    const ws = workspace()
    cpSync(join(dir, 'input'), ws, { recursive: true })
    const { ctx, prompts } = context(ws, req.confirm ?? true)
    if (req.error) {
      await assert.rejects(tools.runTool(req.tool, req.args, ctx), (err) => {
        assert.ok(err instanceof Error)
        assert.equal(err.code, req.error.code, err.message)
        if (req.error.message) assert.match(err.message, new RegExp(req.error.message))
        if (req.error.reason) assert.equal(err.reason, req.error.reason)
        if (req.error.lines) assert.deepEqual(err.lines, req.error.lines)
        return true
      })
      assert.deepEqual(prompts, [], 'a refused request asks nothing')
    } else {
      const r = await tools.runTool(req.tool, req.args, ctx)
      assert.deepEqual(Object.keys(r), ['schema', 'content', 'data'])
      if (req.data) contains(r.data, req.data)
      if (req.contentIncludes) assert.ok(r.content.includes(req.contentIncludes), r.content)
      if (req.prompt) assert.ok(prompts.some((p) => p.includes(req.prompt)), `a prompt names ${req.prompt}: ${prompts}`)
    }
    assert.deepEqual(tree(ws), tree(join(dir, 'expected')))
  })
}
