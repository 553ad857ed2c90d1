// @eddie/tools-native/langchain through @langchain/core's own tool-call path, and
// @eddie/tools-native/vscode with a fake `vscode` module that records registrations (the real
// API exists only inside VS Code; the typecheck fits the adapter to @types/vscode).
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { ToolMessage } from '@langchain/core/messages'
import { workspace } from './helpers.mjs'

const require = createRequire(import.meta.url)
const native = require('../index.js')
const { toLangChainTools } = require('../adapters/langchain.js')
const { registerVsCodeTools, vsCodeManifest } = require('../adapters/vscode.js')
const { createSession, selectTools, describeConfirmation } = require('../adapters/index.js')
const CLI = new URL('../bin/eddie-tools.js', import.meta.url).pathname

test('LangChain: a tool call gives a ToolMessage with the text as content and data as artifact', async () => {
  const dir = workspace({ 'src/a.py': 'def f():\n    pass  # TODO\n' })
  const session = createSession({ cwd: dir })
  const tools = toLangChainTools(['grep', 'read_file'], session)
  assert.deepEqual(tools.map((t) => t.name), ['grep', 'read_file'])
  const grep = tools[0]
  const msg = await grep.invoke({ type: 'tool_call', id: 'call_1', name: 'grep', args: { pattern: 'TODO' } })
  assert.ok(msg instanceof ToolMessage)
  assert.equal(msg.tool_call_id, 'call_1')
  assert.match(msg.content, /src\/a\.py/)
  assert.equal(msg.artifact.totalMatches, 1)
  // an unknown key passes LangChain's own validation (root additionalProperties dropped) so that
  // the core's message, naming the closest key, reaches the model
  const typo = await tools[0].invoke({ type: 'tool_call', id: 'call_2', name: 'grep', args: { pattern: 'TODO', caseInsensitve: true } })
  assert.match(typo.content, /^INVALID_ARGUMENT: .*caseInsensitive/)
  // errors are text for the model, with the code
  const bad = await tools[1].invoke({ type: 'tool_call', id: 'call_3', name: 'read_file', args: { path: '../../etc/passwd' } })
  assert.match(bad.content, /^OUTSIDE_WORKSPACE: /)
  assert.equal(bad.artifact.error.code, 'OUTSIDE_WORKSPACE')
  // the RunnableConfig signal reaches the tool
  const ac = new AbortController()
  ac.abort()
  const cancelled = await grep.invoke({ type: 'tool_call', id: 'c4', name: 'grep', args: { pattern: 'x' } }, { signal: ac.signal })
  assert.equal(cancelled.artifact.error.code, 'CANCELLED', 'the signal reached the tool')
  assert.equal(toLangChainTools(native.toolSpecs(), session).length, native.toolSpecs().length)
  assert.equal(toLangChainTools('review', session).length, 15)
})

/** A fake `vscode` namespace: records registerTool calls, and the classes a result is built of. */
function fakeVsCode(folder) {
  const registered = new Map()
  class LanguageModelTextPart { constructor(value) { this.value = value } }
  class LanguageModelToolResult { constructor(content) { this.content = content } }
  return {
    registered,
    lm: {
      registerTool(name, tool) {
        assert.ok(!registered.has(name), `registered twice: ${name}`)
        registered.set(name, tool)
        return { dispose: () => registered.delete(name) }
      },
    },
    workspace: { workspaceFolders: [{ uri: { fsPath: folder } }] },
    LanguageModelTextPart,
    LanguageModelToolResult,
  }
}
const token = () => {
  const listeners = []
  return { isCancellationRequested: false, onCancellationRequested: (l) => { listeners.push(l); return { dispose() {} } }, cancel() { this.isCancellationRequested = true; listeners.forEach((l) => l()) } }
}

test('VS Code: prepareInvocation shows our confirm text; invoke runs approved; declined changes nothing', async () => {
  const dir = workspace({ 'a.txt': 'old\n' })
  const vscode = fakeVsCode(dir)
  const context = { subscriptions: [] }
  const disposables = registerVsCodeTools(vscode, context)
  const manifest = vsCodeManifest()
  assert.deepEqual([...vscode.registered.keys()], manifest.map((t) => t.name), 'the registrations match the manifest')
  assert.equal(context.subscriptions.length, disposables.length)
  assert.equal(vscode.registered.size, selectTools({ dedupe: true }).length)
  const write = vscode.registered.get('eddie_write_file')
  const input = { path: 'a.txt', content: 'new\n' }
  const prepared = await write.prepareInvocation({ input }, token())
  assert.equal(prepared.confirmationMessages.message, await describeConfirmation('write_file', input, { cwd: dir }))
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'old\n', 'preparing changes nothing')
  const result = await write.invoke({ input, toolInvocationToken: undefined }, token())
  assert.ok(result instanceof vscode.LanguageModelToolResult)
  assert.match(result.content[0].value, /a\.txt/)
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'new\n')
  // a call VS Code did not show a confirmation for is not run: no one could be asked
  await assert.rejects(write.invoke({ input: { path: 'b.txt', content: 'x' } }, token()), /APPROVAL_REQUIRED: .*Create file: b\.txt/s)
  assert.ok(!existsSync(join(dir, 'b.txt')))
  // a destructive command: the finding is part of what VS Code shows, and the approval covers it
  const outside = workspace({ 'keep.txt': 'k' })
  const rm = { command: `rm -rf ${outside}`, shell: true }
  const shownRm = await vscode.registered.get('eddie_run').prepareInvocation({ input: rm }, token())
  assert.match(shownRm.confirmationMessages.message, /^Run command: [^\n]+\n\nDestructive command: \[rm-recursive\]/)
  assert.ok(existsSync(join(outside, 'keep.txt')), 'preparing runs nothing')
  const ranRm = await vscode.registered.get('eddie_run').invoke({ input: rm }, token())
  assert.doesNotMatch(ranRm.content[0].value, /declined/i, 'the user clicked Allow: the model is not told "declined"')
  assert.ok(!existsSync(outside), 'what was shown and allowed ran')
  // tools that do not confirm have no confirmation; errors are thrown with their code
  const read = vscode.registered.get('eddie_read_file')
  assert.equal((await read.prepareInvocation({ input: { path: 'a.txt' } }, token())).confirmationMessages, undefined)
  await assert.rejects(read.invoke({ input: { path: '../x' } }, token()), /^Error: OUTSIDE_WORKSPACE: |OUTSIDE_WORKSPACE: /)
  // a moderate exec tool approved once is not asked about again in this session
  const lint = vscode.registered.get('eddie_lint')
  const lintInput = { command: 'true' }
  assert.match((await lint.prepareInvocation({ input: lintInput }, token())).confirmationMessages.message, /^Lint: true/)
  assert.match((await lint.invoke({ input: lintInput }, token())).content[0].value, /ok|passed|exit/i)
  assert.equal((await lint.prepareInvocation({ input: lintInput }, token())).confirmationMessages, undefined)
  assert.match((await lint.invoke({ input: lintInput }, token())).content[0].value, /ok|passed|exit/i)
  // cancellation kills a running command
  const run = vscode.registered.get('eddie_run')
  const sleep = { command: 'sleep', args: ['30'] }
  await run.prepareInvocation({ input: sleep }, token())
  const t = token()
  setTimeout(() => t.cancel(), 200)
  const started = Date.now()
  const cancelled = await run.invoke({ input: sleep }, t).catch((e) => e)
  assert.ok(Date.now() - started < 20_000)
  assert.match(cancelled.message ?? cancelled.content[0].value, /cancel/i)
  for (const d of disposables) d.dispose()
  assert.equal(vscode.registered.size, 0)
})

test('eddie-tools vscode-manifest prints and writes the languageModelTools block', () => {
  const printed = JSON.parse(execFileSync(process.execPath, [CLI, 'vscode-manifest', '--families', 'code', '--prefix', 'x_'], { encoding: 'utf8' }))
  const tools = printed.contributes.languageModelTools
  assert.deepEqual(tools.map((t) => t.name), selectTools({ families: ['code'] }).map((s) => `x_${s.name}`))
  for (const t of tools) {
    for (const k of ['name', 'displayName', 'modelDescription', 'inputSchema']) assert.ok(t[k], `${t.name}.${k}`)
    assert.equal(t.inputSchema.type, 'object')
  }
  const dir = workspace({ 'package.json': JSON.stringify({ name: 'ext', contributes: { commands: [{ command: 'a' }] } }) })
  execFileSync(process.execPath, [CLI, 'vscode-manifest', '--write', join(dir, 'package.json'), '--max-permission', 'none'], { encoding: 'utf8' })
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  assert.deepEqual(pkg.contributes.commands, [{ command: 'a' }], 'the rest of the package.json is kept')
  assert.deepEqual(pkg.contributes.languageModelTools, vsCodeManifest({ maxPermission: 'none' }))
  let status = 0
  try {
    execFileSync(process.execPath, [CLI, 'vscode-manifest', '--families', 'nope'], { stdio: 'pipe' })
  } catch (e) {
    status = e.status
  }
  assert.equal(status, 2)
  writeFileSync(join(dir, 'x'), '')
})
