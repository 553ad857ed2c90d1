// Compiled with `tsc --noEmit` (strict) only: the adapters' types against the real SDK packages.
/// <reference types="vscode" />
import type * as vscode from 'vscode'
import { createSession, selectTools, toModelText, describeConfirmation, planConfirmation, runTool, type ToolName, type ToolArgsMap, type ToolDataMap } from '../adapters/index.js'
import { toAiSdkTools, aiSdkToolApproval } from '../adapters/ai-sdk.js'
import { toOpenAITools, runOpenAIToolCalls } from '../adapters/openai.js'
import { toAnthropicTools, runAnthropicToolUses, toAnthropicRunnableTools } from '../adapters/anthropic.js'
import { toLangChainTools } from '../adapters/langchain.js'
import { registerVsCodeTools, vsCodeManifest } from '../adapters/vscode.js'
import { generateText, type ToolSet } from 'ai'
import type OpenAI from 'openai'
import type Anthropic from '@anthropic-ai/sdk'
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool'
import type { StructuredToolInterface } from '@langchain/core/tools'

export async function use(model: Parameters<typeof generateText>[0]['model'], openai: OpenAI, anthropic: Anthropic, vs: typeof vscode, context: vscode.ExtensionContext): Promise<number> {
  const session = createSession({ cwd: '/tmp', confirm: async (m) => m.length > 0 })
  const specs = selectTools({ families: ['code', 'files'], maxPermission: 'moderate', dedupe: true })
  // runTool is typed per tool
  const hits: ToolDataMap['grep'] = (await runTool('grep', { pattern: 'TODO', outputMode: 'files' }, session.ctx())).data
  const viaSession = await session.run('read_file', { path: 'a.txt' }, { signal: AbortSignal.timeout(1000) })
  // @ts-expect-error outputMode is an enum
  await runTool('grep', { pattern: 'x', outputMode: 'lines' }, session.ctx())
  // @ts-expect-error not a tool
  const bad: ToolName = 'no_such_tool'
  const args: ToolArgsMap['run'] = { command: 'ls', args: ['-la'], env: { A: '1', B: null } }
  const text = toModelText(viaSession) + toModelText(new Error('x'))
  const message: string | null = await describeConfirmation('write_file', { path: 'a', content: 'b' }, session)
  // approve first: show every prompt, then approve exactly those
  const gated = createSession({ cwd: '/tmp', maxPermission: 'dangerous', sandbox: { mode: 'workspace-write', network: 'off' } })
  const plan = await planConfirmation('run', { command: 'rm -rf build' }, gated)
  if (plan) await gated.run('run', { command: 'rm -rf build' }, { approved: plan })
  await gated.run('write_file', { path: 'a', content: 'b' }, { approved: true })
  // @ts-expect-error approvals name prompt kinds that exist
  await gated.run('write_file', { path: 'a', content: 'b' }, { approved: { kinds: ['everything'] } })
  const ended: boolean = gated.end()

  // AI SDK: the ToolSet goes straight into generateText
  const tools: ToolSet = toAiSdkTools(specs, session)
  const run = await generateText({ model, tools, prompt: 'hi', toolApproval: aiSdkToolApproval(session) })

  // OpenAI: chat and responses
  const chat = await openai.chat.completions.create({ model: 'gpt', messages: [], tools: toOpenAITools(specs, { api: 'chat', strict: true }) })
  const calls = chat.choices[0]?.message.tool_calls ?? []
  const replies: OpenAI.Chat.Completions.ChatCompletionToolMessageParam[] = await runOpenAIToolCalls(calls.filter((c) => c.type === 'function'), session)
  const resp = await openai.responses.create({ model: 'gpt', input: 'hi', tools: toOpenAITools(specs, { api: 'responses' }) })
  const outputs: OpenAI.Responses.ResponseInputItem.FunctionCallOutput[] = await runOpenAIToolCalls(resp.output, session)

  // Anthropic: messages and the beta tool runner
  const msg = await anthropic.messages.create({ model: 'claude', max_tokens: 100, messages: [], tools: toAnthropicTools(specs) })
  const results: Anthropic.ToolResultBlockParam[] = await runAnthropicToolUses(msg.content, session)
  const runnable: BetaRunnableTool[] = toAnthropicRunnableTools(['grep'], session)

  // LangChain
  const lc: StructuredToolInterface[] = toLangChainTools(undefined, session)

  // Names and arguments are checked at compile time; a misspelling does not compile.
  // @ts-expect-error not a tool
  await session.run('grepp', { pattern: 'x' })
  // @ts-expect-error grep has no `patern`
  await session.run('grep', { patern: 'x' })
  // @ts-expect-error not a tool
  toAiSdkTools(['grepp'], session)
  // @ts-expect-error not a tool
  toOpenAITools(['grepp'])
  // @ts-expect-error not a tool
  toAnthropicTools(['read_fil'])
  // @ts-expect-error not a tool
  toLangChainTools(['grepp'], session)
  // @ts-expect-error not a profile
  toAnthropicTools('everything')
  // @ts-expect-error not a tool
  await planConfirmation('grepp', { pattern: 'x' })
  // Another agent's name, a profile, and the escape hatch for a name known only at run time.
  const viaAlias = toOpenAITools(['read', 'execute_command', 'grep'])
  const coding = toAnthropicTools('coding')
  const dynamicName: string = ['gr', 'ep'].join('')
  const dynamic = await session.runDynamic(dynamicName, { pattern: 'x' })
  const core = toAnthropicTools()

  // VS Code: the real namespace fits
  const disposables = registerVsCodeTools(vs, context, { families: ['code'] })
  const manifest = vsCodeManifest({ maxPermission: 'none' })
  return (hits.files?.length ?? 0) + text.length + (message?.length ?? 0) + run.steps.length + replies.length + outputs.length + results.length + runnable.length + lc.length + disposables.length + manifest.length + args.command.length + bad.length + Number(ended) + viaAlias.length + coding.length + dynamic.content.length + core.length
}
