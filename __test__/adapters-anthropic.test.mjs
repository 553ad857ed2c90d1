// @eddie/tools-native/anthropic: definitions, the tool_use runner, and a run through the real
// `@anthropic-ai/sdk` tool runner (client.beta.messages.toolRunner) over a stub fetch.
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import Anthropic from '@anthropic-ai/sdk'
import { workspace } from './helpers.mjs'

const require = createRequire(import.meta.url)
const native = require('../index.js')
const { toAnthropicTools, runAnthropicToolUses, toAnthropicRunnableTools } = require('../adapters/anthropic.js')
const { createSession } = require('../adapters/index.js')

test('toAnthropicTools: name, description, input_schema for every tool', () => {
  const specs = native.toolSpecs()
  assert.deepEqual(toAnthropicTools().map((t) => t.name), ['read_file', 'write_file', 'edit_file', 'apply_patch', 'grep', 'glob', 'run', 'git_status', 'git_diff'], 'the core profile by default')
  const tools = toAnthropicTools(specs)
  assert.equal(tools.length, specs.length)
  for (const [i, t] of tools.entries()) {
    assert.deepEqual(Object.keys(t).sort(), ['description', 'input_schema', 'name'])
    assert.equal(t.name, specs[i].name)
    assert.match(t.name, /^[a-zA-Z0-9_-]{1,64}$/, 'Anthropic tool-name rule')
    assert.equal(t.input_schema.type, 'object')
  }
  assert.deepEqual(toAnthropicTools(['grep', 'fileRead']).map((t) => t.name), ['grep', 'file_read'])
})

test('runAnthropicToolUses: tool_result blocks, is_error with the code, other blocks skipped', async () => {
  const dir = workspace({ 'a.txt': 'hello\n' })
  const session = createSession({ cwd: dir, confirm: () => true })
  const message = {
    role: 'assistant',
    content: [
      { type: 'text', text: 'let me look' },
      { type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a.txt' } },
      { type: 'tool_use', id: 'tu2', name: 'read_file', input: { path: '/etc/passwd' } },
      { type: 'tool_use', id: 'tu3', name: 'write_file', input: { path: 'b.txt', content: 'B' } },
      { type: 'tool_use', id: 'tu4', name: 'grep', input: { pattern: 'x', bogus: 1 } },
    ],
  }
  const results = await runAnthropicToolUses(message, session)
  assert.deepEqual(results.map((r) => r.tool_use_id), ['tu1', 'tu2', 'tu3', 'tu4'])
  assert.match(results[0].content, /hello/)
  assert.equal(results[0].is_error, undefined)
  assert.equal(results[1].is_error, true)
  assert.match(results[1].content, /^OUTSIDE_WORKSPACE: /)
  assert.equal(readFileSync(join(dir, 'b.txt'), 'utf8'), 'B')
  assert.equal(results[3].is_error, true)
  assert.match(results[3].content, /^INVALID_ARGUMENT: .*bogus/)
})

/** A fetch answering the Messages API with `replies` in turn, recording the request bodies. */
function stubFetch(replies) {
  const requests = []
  const fetch = async (url, init) => {
    requests.push({ url: String(url), body: JSON.parse(init.body) })
    return new Response(JSON.stringify(replies[requests.length - 1]), { status: 200, headers: { 'content-type': 'application/json' } })
  }
  return { fetch, requests }
}
const reply = (content, stop) => ({
  id: `msg_${stop}`, type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason: stop, stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
})

test("the SDK's tool runner runs our tools (stub fetch, scripted model)", async () => {
  const dir = workspace({ 'notes.md': '# notes\nTODO: ship\n', 'keep.txt': 'keep\n' })
  const asked = []
  const session = createSession({ cwd: dir, confirm: (m) => { asked.push(m); return false } })
  const { fetch, requests } = stubFetch([
    reply([
      { type: 'tool_use', id: 'toolu_1', name: 'grep', input: { pattern: 'TODO', outputMode: 'content' } },
      { type: 'tool_use', id: 'toolu_2', name: 'delete_file', input: { path: 'keep.txt', force: true } },
      { type: 'tool_use', id: 'toolu_3', name: 'read_file', input: { path: 'missing.md' } },
    ], 'tool_use'),
    reply([{ type: 'text', text: 'done' }], 'end_turn'),
  ])
  const client = new Anthropic({ apiKey: 'test', baseURL: 'http://127.0.0.1:9', fetch, maxRetries: 0 })
  const final = await client.beta.messages.toolRunner({
    model: 'claude-test',
    max_tokens: 1000,
    messages: [{ role: 'user', content: 'find the TODO, then clean up' }],
    tools: toAnthropicRunnableTools(['grep', 'delete_file', 'read_file'], session),
  })
  assert.equal(final.content[0].text, 'done')
  assert.equal(requests.length, 2)
  assert.deepEqual(requests[0].body.tools.map((t) => t.name), ['grep', 'delete_file', 'read_file'])
  const results = requests[1].body.messages.at(-1).content
  const byId = Object.fromEntries(results.map((r) => [r.tool_use_id, r]))
  const text = (r) => (typeof r.content === 'string' ? r.content : r.content.map((c) => c.text).join(''))
  assert.match(text(byId.toolu_1), /TODO: ship/)
  assert.ok(!byId.toolu_1.is_error)
  assert.ok(existsSync(join(dir, 'keep.txt')), 'the declined delete changed nothing')
  assert.equal(asked.length, 1)
  assert.equal(byId.toolu_3.is_error, true)
  assert.match(text(byId.toolu_3), /^NOT_FOUND: /)
})
