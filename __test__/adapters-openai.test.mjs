// @eddie/tools-native/openai: strict-mode schemas for every tool (checked by a validator written
// from OpenAI's documented strict-mode rules, and by the SDK's own strict transform), the runner
// of tool calls, and a run through the real `openai` SDK over a stub fetch.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import OpenAI from 'openai'
import { workspace, schemaErrors } from './helpers.mjs'

const require = createRequire(import.meta.url)
const native = require('../index.js')
const { toOpenAITools, runOpenAIToolCalls, toOpenAIRunnableTools, toStrictSchema } = require('../adapters/openai.js')
const { createSession } = require('../adapters/index.js')
const { toStrictJsonSchema } = require('openai/lib/transform')

/**
 * OpenAI's strict-mode rules (Structured Outputs, "Supported schemas"): the root is an object and
 * not anyOf; every object has additionalProperties: false and lists every property in required;
 * every node has a type (or is an anyOf / $ref); only the supported keywords appear (no default,
 * minLength, maxLength, patternProperties, ...); at most 10 levels of nesting and 5000 properties;
 * enums of at most 1000 values.
 */
const SUPPORTED = new Set([
  'type', 'description', 'title', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf',
  '$ref', '$defs', 'definitions', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'minItems', 'maxItems',
])
function strictErrors(root) {
  const errors = []
  if (root.type !== 'object') errors.push('root: type is not object')
  if (root.anyOf) errors.push('root: anyOf')
  let properties = 0
  let depth = 0
  const walk = (s, path, level) => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return errors.push(`${path}: not a schema`)
    depth = Math.max(depth, level)
    for (const k of Object.keys(s)) if (!SUPPORTED.has(k)) errors.push(`${path}: unsupported keyword ${k}`)
    const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : []
    if (!types.length && !s.anyOf && !s.$ref) errors.push(`${path}: no type`)
    if (Array.isArray(s.enum) && s.enum.length > 1000) errors.push(`${path}: enum too long`)
    if (types.includes('object') || s.properties) {
      if (s.additionalProperties !== false) errors.push(`${path}: additionalProperties is not false`)
      const keys = Object.keys(s.properties ?? {})
      for (const k of keys) if (!(s.required ?? []).includes(k)) errors.push(`${path}: ${k} is not required`)
      properties += keys.length
      for (const k of keys) walk(s.properties[k], `${path}.${k}`, level + 1)
    }
    if (s.items) walk(s.items, `${path}[]`, level + 1)
    for (const [i, b] of (s.anyOf ?? []).entries()) walk(b, `${path}|${i}`, level)
  }
  walk(root, '', 0)
  if (depth > 10) errors.push('more than 10 levels')
  if (properties > 5000) errors.push('more than 5000 properties')
  return errors
}

test('strict: every converted schema passes the strict-mode rules (and the originals did not)', () => {
  const specs = native.toolSpecs()
  const failingBefore = specs.filter((s) => strictErrors({ type: 'object', ...s.jsonSchema }).length > 0)
  assert.ok(failingBefore.length > 40, `the validator can fail: ${failingBefore.length} originals fail`)
  for (const t of toOpenAITools(specs, { api: 'chat', strict: true })) {
    assert.deepEqual(strictErrors(t.function.parameters), [], t.function.name)
    assert.equal(t.function.strict, true)
  }
  assert.equal(toOpenAITools(specs).length, specs.length)
})

test("strict: the SDK's own strict transform accepts every converted schema unchanged (it rejects 48 originals)", () => {
  let rejected = 0
  for (const s of native.toolSpecs()) {
    try {
      toStrictJsonSchema({ type: 'object', ...s.jsonSchema })
    } catch {
      rejected += 1
    }
    const ours = toStrictSchema(s.jsonSchema)
    assert.deepEqual(toStrictJsonSchema(ours), ours, s.name)
  }
  assert.ok(rejected >= 40, `originals rejected: ${rejected}`)
})

test('strict: optional properties are nullable, maps become entry lists, the rest of the meaning stays', () => {
  const [run] = toOpenAITools(['run'], { api: 'responses' })
  assert.equal(run.type, 'function')
  assert.equal(run.name, 'run')
  const p = run.parameters
  assert.deepEqual(p.required.sort(), Object.keys(p.properties).sort())
  assert.equal(p.properties.command.type, 'string', 'required stays non-null')
  assert.ok(p.properties.cwd.type.includes('null'), 'optional becomes nullable')
  assert.ok(p.properties.env.type.includes('array'), 'a map becomes a list of entries')
  const [grep] = toOpenAITools(['grep'])
  assert.ok(grep.function.parameters.properties.outputMode.enum.includes(null))
  assert.ok(grep.function.parameters.properties.include.anyOf.some((b) => b.type === 'null'))
  // non-strict keeps the tool's schema, with additionalProperties: false
  const [loose] = toOpenAITools(['read_file'], { strict: false })
  assert.equal(loose.function.parameters.additionalProperties, false)
  assert.deepEqual(loose.function.parameters.required, native.toolSpecs().find((s) => s.name === 'read_file').jsonSchema.required)
})

test('runOpenAIToolCalls: nulls dropped, entry lists back to maps, chat messages and responses items, errors as text', async () => {
  const dir = workspace({ 'a.txt': 'hello\n' })
  const session = createSession({ cwd: dir, confirm: () => true })
  // what a strict model sends: every property, null for the ones it leaves out
  const strictRead = Object.fromEntries(Object.keys(toOpenAITools(['read_file'])[0].function.parameters.properties).map((k) => [k, null]))
  const strictRun = Object.fromEntries(Object.keys(toOpenAITools(['run'])[0].function.parameters.properties).map((k) => [k, null]))
  const calls = [
    { id: 'c1', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ ...strictRead, path: 'a.txt' }) } },
    { id: 'c2', type: 'function', function: { name: 'run', arguments: JSON.stringify({ ...strictRun, command: 'sh', args: ['-c', 'echo "$FOO-${HOME:-unset}"'], env: [{ name: 'FOO', value: 'bar' }, { name: 'HOME', value: null }] }) } },
    { id: 'c3', type: 'function', function: { name: 'read_file', arguments: '{"path": "../x"}' } },
    { id: 'c4', type: 'function', function: { name: 'read_file', arguments: '{not json' } },
    { id: 'c5', type: 'function', function: { name: 'no_such_tool', arguments: '{}' } },
  ]
  const out = await runOpenAIToolCalls(calls, session)
  assert.deepEqual(out.map((m) => [m.role, m.tool_call_id]), calls.map((c) => ['tool', c.id]))
  assert.match(out[0].content, /hello/)
  assert.match(out[1].content, /bar-unset/, 'env entries set FOO and unset HOME')
  assert.match(out[2].content, /^OUTSIDE_WORKSPACE: /)
  assert.match(out[3].content, /^INVALID_ARGUMENT: /)
  assert.match(out[4].content, /^UNKNOWN_TOOL: /)
  const items = await runOpenAIToolCalls(
    [{ type: 'message', id: 'm' }, { type: 'function_call', call_id: 'r1', name: 'write_file', arguments: JSON.stringify({ path: 'b.txt', content: 'B', encoding: null }) }],
    session,
  )
  assert.deepEqual(items.map((i) => [i.type, i.call_id]), [['function_call_output', 'r1']])
  assert.equal(readFileSync(join(dir, 'b.txt'), 'utf8'), 'B')
})

/** A fetch that answers the OpenAI API with `replies` in turn and records the request bodies. */
function stubFetch(replies) {
  const requests = []
  const fetch = async (url, init) => {
    requests.push({ url: String(url), body: JSON.parse(init.body) })
    const body = replies[requests.length - 1]
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } })
  }
  return { fetch, requests }
}
const completion = (message, finish) => ({
  id: 'cmpl', object: 'chat.completion', created: 0, model: 'gpt-test',
  choices: [{ index: 0, finish_reason: finish, logprobs: null, message: { role: 'assistant', refusal: null, ...message } }],
})

test("the OpenAI SDK's runTools loop runs our tools (stub fetch, scripted model)", async () => {
  const dir = workspace({ 'src/a.ts': 'const x = 1 // TODO fix\n' })
  const session = createSession({ cwd: dir, confirm: () => true })
  const { fetch, requests } = stubFetch([
    completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'grep', arguments: JSON.stringify({ pattern: 'TODO', path: null, outputMode: 'files' }) } }] }, 'tool_calls'),
    completion({ content: 'Found it in src/a.ts' }, 'stop'),
  ])
  const client = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 })
  const runner = client.chat.completions.runTools({
    model: 'gpt-test',
    messages: [{ role: 'user', content: 'where is the TODO?' }],
    tools: toOpenAIRunnableTools(['grep', 'read_file'], session),
  })
  assert.equal(await runner.finalContent(), 'Found it in src/a.ts')
  assert.equal(requests.length, 2)
  const sent = requests[0].body.tools
  assert.deepEqual(sent.map((t) => t.function.name), ['grep', 'read_file'])
  for (const t of sent) assert.deepEqual(strictErrors(t.function.parameters), [])
  const toolMessage = requests[1].body.messages.find((m) => m.role === 'tool')
  assert.equal(toolMessage.tool_call_id, 'call_1')
  assert.match(toolMessage.content, /src\/a\.ts/)
})

test('chat.completions.create + runOpenAIToolCalls: the manual loop over the SDK', async () => {
  const dir = workspace({})
  const session = createSession({ cwd: dir, confirm: () => false })
  const { fetch, requests } = stubFetch([
    completion({ content: null, tool_calls: [{ id: 'w1', type: 'function', function: { name: 'write_file', arguments: '{"path":"x.txt","content":"hi"}' } }] }, 'tool_calls'),
    completion({ content: 'ok' }, 'stop'),
  ])
  const client = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 })
  const tools = toOpenAITools(['write_file'])
  const messages = [{ role: 'user', content: 'write' }]
  const first = await client.chat.completions.create({ model: 'gpt-test', messages, tools })
  messages.push(first.choices[0].message, ...(await runOpenAIToolCalls(first.choices[0].message.tool_calls, session)))
  await client.chat.completions.create({ model: 'gpt-test', messages, tools })
  assert.ok(!existsSync(join(dir, 'x.txt')), 'declined: nothing written')
  const reply = requests[1].body.messages.at(-1)
  assert.equal(reply.role, 'tool')
  assert.equal(schemaErrors({ type: 'object', required: ['role', 'tool_call_id', 'content'] }, reply).length, 0)
})

test('responses.create + runOpenAIToolCalls: function_call items in, function_call_output items back', async () => {
  const dir = workspace({ 'a.txt': 'hello\n' })
  const session = createSession({ cwd: dir })
  const base = { object: 'response', created_at: 0, model: 'gpt-test', status: 'completed', error: null, incomplete_details: null, instructions: null, metadata: {}, parallel_tool_calls: true, temperature: 1, tool_choice: 'auto', top_p: 1 }
  const { fetch, requests } = stubFetch([
    { ...base, id: 'r1', tools: [], output: [{ type: 'function_call', id: 'fc1', call_id: 'call_a', name: 'read_file', arguments: JSON.stringify({ path: 'a.txt', offset: null }), status: 'completed' }] },
    { ...base, id: 'r2', tools: [], output: [{ type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'it says hello', annotations: [] }] }] },
  ])
  const client = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 })
  const tools = toOpenAITools(['read_file'], { api: 'responses' })
  const input = [{ role: 'user', content: 'read a.txt' }]
  const first = await client.responses.create({ model: 'gpt-test', input, tools })
  input.push(...first.output, ...(await runOpenAIToolCalls(first.output, session)))
  const second = await client.responses.create({ model: 'gpt-test', input, tools })
  assert.equal(second.output_text, 'it says hello')
  assert.deepEqual(requests[0].body.tools.map((t) => [t.type, t.name, t.strict]), [['function', 'read_file', true]])
  const out = requests[1].body.input.find((i) => i.type === 'function_call_output')
  assert.equal(out.call_id, 'call_a')
  assert.match(out.output, /hello/)
})

test("strict: the seeds' spellings leave the schema the model sees, and the core still takes them", async () => {
  const grep = (strict) => toOpenAITools(['grep'], { strict })[0].function.parameters
  const seedKeys = ['directory', 'use_regex', 'case_sensitive', 'include_files', 'exclude_files', 'search_type', 'style']
  for (const k of seedKeys) {
    assert.ok(k in grep(false).properties, `non-strict keeps ${k}`)
    assert.ok(!(k in grep(true).properties), `strict drops ${k}`)
    assert.ok(!grep(true).required.includes(k))
  }
  assert.ok(grep(true).required.includes('pattern') && grep(true).required.includes('caseInsensitive'))
  for (const [tool, key] of [['process_start', 'background'], ['git_commit', 'repo_path'], ['git_branch', 'create'], ['run', 'style'], ['write_file', 'style']]) {
    assert.ok(!(key in toOpenAITools([tool])[0].function.parameters.properties), `${tool}.${key}`)
  }
  // A model trained on TunaCode sends them anyway: the call goes through.
  const dir = workspace({ 'a.txt': 'Alpha\nbeta\n' })
  const [reply] = await runOpenAIToolCalls(
    [{ id: 'c1', type: 'function', function: { name: 'grep', arguments: JSON.stringify({ pattern: 'alpha', directory: '.', case_sensitive: false }) } }],
    createSession({ cwd: dir }),
  )
  assert.match(reply.content, /a\.txt/)
  assert.doesNotMatch(reply.content, /^[A-Z_]+: /)
})

test('the default request schema is at most 20 kB in every framework', async () => {
  const { measure } = await import('../adapters/schema-bytes.mjs')
  const table = measure()
  const { PROFILE_NAMES } = require('../adapters/index.js')
  assert.deepEqual(Object.keys(table), [...PROFILE_NAMES, 'every tool (no dedupe)'])
  for (const [framework, bytes] of Object.entries(table.core)) {
    if (framework === 'count' || framework.includes('with output schemas') || framework === 'vscode manifest') continue
    assert.ok(bytes <= 20_000, `core, ${framework}: ${bytes} bytes`)
  }
  assert.ok(table['every tool (no dedupe)']['openai strict'] > 80_000, 'the measure can fail')
})
