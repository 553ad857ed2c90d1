// @eddie/tools-native/ai-sdk: a ToolSet run by the real AI SDK (`ai` 7) with its mock language
// model: generateText for two steps, the model reading only the text while code keeps `data`,
// the abortSignal mapped, errors as `CODE: message`, and approve-first with our confirm text.
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { generateText, hasToolCall, stepCountIs } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { toAiSdkTools, aiSdkToolApproval } from '../adapters/ai-sdk.mjs'
import { workspace } from './helpers.mjs'

const require = createRequire(import.meta.url)
const native = require('../index.js')
const { createSession, describeConfirmation, modelSchema } = require('../adapters/index.js')

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
const toolCalls = (...calls) => ({
  content: calls.map(([id, name, input]) => ({ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) })),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
})
const text = (t) => ({ content: [{ type: 'text', text: t }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] })

/** The tool messages the model received on its second call. */
function toolOutputs(model, call = 1) {
  const prompt = model.doGenerateCalls[call].prompt
  return prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content).filter((p) => p.type === 'tool-result')
}

test('generateText runs our tools for two steps: the model reads the text, code keeps data', async () => {
  const dir = workspace({ 'src/a.ts': 'export const a = 1 // TODO\n', 'README.md': 'hi\n' })
  const session = createSession({ cwd: dir })
  const model = new MockLanguageModelV4({
    doGenerate: [toolCalls(['c1', 'grep', { pattern: 'TODO' }], ['c2', 'read_file', { path: 'nope.md' }]), text('the TODO is in src/a.ts')],
  })
  const tools = toAiSdkTools(['grep', 'read_file'], session)
  const result = await generateText({ model, tools, prompt: 'find TODOs', stopWhen: stepCountIs(2) })
  assert.equal(result.text, 'the TODO is in src/a.ts')
  assert.equal(result.steps.length, 2)
  // the tools the model saw: our JSON Schemas
  const sent = model.doGenerateCalls[0].tools
  assert.deepEqual(sent.map((t) => t.name), ['grep', 'read_file'])
  assert.deepEqual(sent[0].inputSchema, modelSchema(native.toolSpecs().find((s) => s.name === 'grep')))
  // code keeps the whole result
  const grepResult = result.steps[0].toolResults.find((r) => r.toolName === 'grep')
  assert.equal(grepResult.output.data.totalMatches, 1)
  assert.match(JSON.stringify(grepResult.output.data.matches), /src\/a\.ts/)
  // the model reads only the text, and an error as CODE: message
  const outputs = toolOutputs(model)
  const grepOut = outputs.find((o) => o.toolCallId === 'c1').output
  assert.deepEqual(grepOut, { type: 'text', value: grepResult.output.content })
  const readOut = outputs.find((o) => o.toolCallId === 'c2').output
  assert.equal(readOut.type, 'error-text')
  assert.match(readOut.value, /^NOT_FOUND: /)
  // 13x less than the whole result would have been
  assert.ok(JSON.stringify(grepResult.output).length > 3 * grepOut.value.length)
})

test('the abortSignal of the call reaches the tool (a running command is killed)', async () => {
  const dir = workspace({})
  const session = createSession({ cwd: dir, confirm: () => true })
  const controller = new AbortController()
  const model = new MockLanguageModelV4({ doGenerate: [toolCalls(['c1', 'run', { command: 'sleep', args: ['30'] }]), text('stopped')] })
  const tools = toAiSdkTools(['run'], session)
  const timer = setTimeout(() => controller.abort(), 300)
  const started = Date.now()
  await generateText({ model, tools, prompt: 'sleep', stopWhen: stepCountIs(2), abortSignal: controller.signal }).catch(() => {})
  clearTimeout(timer)
  assert.ok(Date.now() - started < 20_000, 'the 30 s command did not run to its end')
  const listed = await native.runTool('process_list', {}, { cwd: dir })
  assert.equal(listed.data.processes?.length ?? 0, 0)
})

test('approval "sdk": the SDK asks first with our confirm text; approved runs, denied changes nothing', async () => {
  const dir = workspace({ 'a.txt': 'old\n' })
  const session = createSession({ cwd: dir, confirm: () => { throw new Error('the mid-call confirm must not be used') } })
  const tools = toAiSdkTools(['write_file', 'read_file'], session, { approval: 'sdk' })
  const expected = await describeConfirmation('write_file', { path: 'a.txt', content: 'new\n' }, session)
  assert.equal(typeof expected, 'string')
  // step 1: the model asks to write; the SDK stops for approval, with our text as the reason
  const model = new MockLanguageModelV4({ doGenerate: [toolCalls(['w1', 'write_file', { path: 'a.txt', content: 'new\n' }]), text('written')] })
  const first = await generateText({ model, tools, prompt: 'write', toolApproval: aiSdkToolApproval(session), stopWhen: stepCountIs(2) })
  const request = first.content.find((p) => p.type === 'tool-approval-request')
  assert.ok(request, 'an approval request')
  assert.equal(request.toolCall.toolName, 'write_file')
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'old\n', 'nothing written before approval')
  assert.equal(request.reason, expected, 'the approver sees our confirm text')
  // step 2: approve and continue: the tool runs approved
  const messages = [
    { role: 'user', content: 'write' },
    ...first.responseMessages,
    { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }] },
  ]
  const second = await generateText({ model, tools, messages, toolApproval: aiSdkToolApproval(session), stopWhen: stepCountIs(2) })
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'new\n')
  assert.equal(second.text, 'written')
  // a denied call changes nothing
  const dir2 = workspace({ 'a.txt': 'old\n' })
  const s2 = createSession({ cwd: dir2 })
  const tools2 = toAiSdkTools(['write_file'], s2, { approval: 'sdk' })
  const model2 = new MockLanguageModelV4({ doGenerate: [toolCalls(['w2', 'write_file', { path: 'a.txt', content: 'new\n' }]), text('ok')] })
  const r1 = await generateText({ model: model2, tools: tools2, prompt: 'write', toolApproval: aiSdkToolApproval(s2) })
  const req2 = r1.content.find((p) => p.type === 'tool-approval-request')
  await generateText({
    model: model2,
    tools: tools2,
    messages: [{ role: 'user', content: 'write' }, ...r1.response.messages, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: req2.approvalId, approved: false }] }],
    toolApproval: aiSdkToolApproval(s2),
  })
  assert.equal(readFileSync(join(dir2, 'a.txt'), 'utf8'), 'old\n')
  assert.ok(!existsSync(join(dir2, 'a.txt.tmp')))
})

test('approve first, two rounds: the history grows by result.responseMessages (examples/ai-sdk-approve-first.mjs)', async () => {
  const { approveFirst } = await import('../examples/ai-sdk-approve-first.mjs')
  const script = () =>
    new MockLanguageModelV4({
      doGenerate: [
        toolCalls(['c1', 'write_file', { path: 'a.txt', content: 'one\n' }]),
        toolCalls(['c2', 'run', { command: 'rm -rf build', shell: true }]),
        text('done'),
      ],
    })
  const dir = workspace({ 'build/x.o': 'x' })
  const out = await approveFirst({ model: script(), cwd: dir, prompt: 'go', approve: () => true })
  assert.equal(out.text, 'done')
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'one\n')
  assert.ok(!existsSync(join(dir, 'build')), 'the approved destructive command ran')
  assert.equal(out.asked.length, 2)
  assert.match(out.asked[1], /rm/)
  // A no changes nothing, and the model reads that it was denied.
  const dir2 = workspace({ 'build/x.o': 'x' })
  const denied = await approveFirst({ model: script(), cwd: dir2, prompt: 'go', approve: (reason) => !/rm/.test(reason) })
  assert.equal(denied.text, 'done')
  assert.ok(existsSync(join(dir2, 'build/x.o')))
  // The pitfall the example avoids: only the last step's messages lose the approved call's result.
  const session = createSession({ cwd: workspace() })
  const tools = toAiSdkTools(['write_file', 'run'], session, { approval: 'sdk' })
  const model = script()
  const messages = [{ role: 'user', content: 'go' }]
  const r1 = await generateText({ model, tools, messages, toolApproval: aiSdkToolApproval(session) })
  const req1 = r1.content.find((p) => p.type === 'tool-approval-request')
  messages.push(...r1.response.messages, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: req1.approvalId, approved: true }] })
  const r2 = await generateText({ model, tools, messages, toolApproval: aiSdkToolApproval(session) })
  const req2 = r2.content.find((p) => p.type === 'tool-approval-request')
  messages.push(...r2.response.messages, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: req2.approvalId, approved: false }] })
  await assert.rejects(generateText({ model, tools, messages, toolApproval: aiSdkToolApproval(session) }), (e) => e.name === 'AI_MissingToolResultsError')
})

test('CommonJS entry: require("@eddie/tools-native/ai-sdk") builds the same ToolSet', () => {
  const cjs = require('@eddie/tools-native/ai-sdk')
  const set = cjs.toAiSdkTools(native.toolSpecs(), { cwd: '/tmp' })
  assert.equal(Object.keys(set).length, native.toolSpecs().length)
  // Without a list: the core profile.
  assert.deepEqual(Object.keys(cjs.toAiSdkTools(undefined, { cwd: '/tmp' })), require('../adapters/index.js').profileTools('core'))
  for (const t of Object.values(set)) {
    assert.equal(typeof t.execute, 'function')
    assert.equal(typeof t.toModelOutput, 'function')
  }
})

test('approval "sdk" without toolApproval: the tool-level needsApproval still stops the call', async () => {
  const dir = workspace({ 'a.txt': 'old\n' })
  const session = createSession({ cwd: dir })
  const tools = toAiSdkTools(['write_file'], session, { approval: 'sdk' })
  const model = new MockLanguageModelV4({ doGenerate: [toolCalls(['w1', 'write_file', { path: 'a.txt', content: 'new\n' }]), text('x')] })
  const r = await generateText({ model, tools, prompt: 'write', stopWhen: stepCountIs(2) })
  assert.ok(r.content.some((p) => p.type === 'tool-approval-request'))
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'old\n')
  // tools that do not confirm are not held back
  const read = toAiSdkTools(['read_file'], session, { approval: 'sdk' })
  assert.equal(read.read_file.needsApproval, undefined)
  assert.equal(await tools.write_file.needsApproval({ path: 'a.txt', content: 'x' }, {}), true)
})

test('streamText runs the same ToolSet (the streaming path)', async () => {
  const { streamText } = await import('ai')
  const { convertArrayToReadableStream } = await import('ai/test')
  const dir = workspace({ 'a.txt': 'streamed\n' })
  const session = createSession({ cwd: dir })
  const finish = (unified) => ({ type: 'finish', finishReason: { unified, raw: unified }, usage })
  const model = new MockLanguageModelV4({
    doStream: [
      { stream: convertArrayToReadableStream([{ type: 'stream-start', warnings: [] }, { type: 'tool-call', toolCallId: 's1', toolName: 'read_file', input: '{"path":"a.txt"}' }, finish('tool-calls')]) },
      { stream: convertArrayToReadableStream([{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'read it' }, { type: 'text-end', id: 't' }, finish('stop')]) },
    ],
  })
  const result = streamText({ model, tools: toAiSdkTools(['read_file'], session), prompt: 'read', stopWhen: stepCountIs(2) })
  assert.equal(await result.text, 'read it')
  const steps = await result.steps
  assert.match(steps[0].toolResults[0].output.content, /streamed/)
  const sent = model.doStreamCalls[1].prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content)
  assert.deepEqual(sent[0].output, { type: 'text', value: steps[0].toolResults[0].output.content })
})

test('resultShape: the model reads Stack’s or Floyd’s envelope, failures included', async () => {
  const dir = workspace({ 'a.txt': 'one\n' })
  const stack = toAiSdkTools(['read_file'], createSession({ cwd: dir, resultShape: 'stack' })).read_file
  let out = await stack.execute({ path: 'a.txt' }, { toolCallId: 'c1', messages: [] })
  let seen = JSON.parse(stack.toModelOutput({ output: out }).value)
  assert.deepEqual([seen.success, seen.result.totalLines], [true, 1])
  out = await stack.execute({ path: 'nope.txt' }, { toolCallId: 'c2', messages: [] })
  seen = JSON.parse(stack.toModelOutput({ output: out }).value)
  assert.equal(seen.success, false)
  assert.match(seen.error, /^NOT_FOUND: /)
  const floyd = toAiSdkTools(['read_file'], createSession({ cwd: dir, resultShape: 'floyd' })).read_file
  out = await floyd.execute({ path: 'nope.txt' }, { toolCallId: 'c3', messages: [] })
  seen = JSON.parse(floyd.toModelOutput({ output: out }).value)
  assert.deepEqual([seen.success, seen.error.code], [false, 'NOT_FOUND'])
})

test('Alfredo’s attempt_completion ends the loop when the host stops on it (as adapters/README.md shows)', async () => {
  const dir = workspace({ 'a.txt': 'one\n' })
  const tools = toAiSdkTools(['read_file', 'attempt_completion'], createSession({ cwd: dir }))
  const model = new MockLanguageModelV4({
    doGenerate: [
      toolCalls(['c1', 'read_file', { path: 'a.txt' }]),
      toolCalls(['c2', 'attempt_completion', { result: 'Read a.txt: it says one.', command: 'cat a.txt' }]),
      text('never reached'),
    ],
  })
  const r = await generateText({ model, tools, prompt: 'go', stopWhen: [hasToolCall('attempt_completion'), stepCountIs(10)] })
  assert.equal(model.doGenerateCalls.length, 2, 'no step after attempt_completion')
  const done = r.steps.at(-1).toolResults.find((x) => x.toolName === 'attempt_completion')
  assert.deepEqual(done.output.data, { completed: true, result: 'Read a.txt: it says one.', command: 'cat a.txt' })
})
