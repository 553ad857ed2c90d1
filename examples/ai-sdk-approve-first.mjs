// The AI SDK approve-first loop (ai 7): the SDK stops before every call that would ask, shows
// every prompt of that call as the approval's `reason`, and the call then runs with exactly those
// prompts approved. Run: node examples/ai-sdk-approve-first.mjs (a scripted model from `ai/test`
// makes two writes, so there are two approval rounds; no network).
//
// The loop keeps ONE message history: the user's prompt, then after each round everything the
// round added, `result.responseMessages` (the tool results of the calls approved in the previous
// round, which ran first, then each step's assistant and tool messages), then the approval
// responses. `result.response.messages` is only the last step's: it leaves out the results of the
// approved calls, and the next round fails with AI_MissingToolResultsError.
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSession } from '@eddie/tools-native/adapters'
import { toAiSdkTools, aiSdkToolApproval } from '@eddie/tools-native/ai-sdk'

/**
 * Run the approve-first loop until the model answers in text.
 * @param {{model: import('ai').LanguageModel, cwd: string, prompt: string, approve: (reason: string) => boolean | Promise<boolean>, maxRounds?: number}} options
 */
export async function approveFirst({ model, cwd, prompt, approve, maxRounds = 10 }) {
  const session = createSession({ cwd })
  const tools = toAiSdkTools(['read_file', 'write_file', 'run'], session, { approval: 'sdk' })
  /** @type {import('ai').ModelMessage[]} */
  const messages = [{ role: 'user', content: prompt }]
  /** @type {string[]} */
  const asked = []
  for (let round = 0; round < maxRounds; round++) {
    const result = await generateText({ model, tools, messages, toolApproval: aiSdkToolApproval(session), stopWhen: stepCountIs(5) })
    messages.push(...result.responseMessages)
    const requests = result.content.filter((p) => p.type === 'tool-approval-request')
    if (requests.length === 0) return { text: result.text, asked, messages }
    /** @type {import('ai').ToolApprovalResponse[]} */
    const answers = []
    for (const r of requests) {
      const reason = r.type === 'tool-approval-request' && typeof r.reason === 'string' ? r.reason : ''
      asked.push(reason)
      answers.push({ type: 'tool-approval-response', approvalId: r.approvalId, approved: await approve(reason) })
    }
    messages.push({ role: 'tool', content: answers })
  }
  throw new Error(`no answer after ${maxRounds} rounds`)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
  /** @param {string} id @param {string} name @param {unknown} input */
  const call = (id, name, input) => ({ content: [{ type: /** @type {const} */ ('tool-call'), toolCallId: id, toolName: name, input: JSON.stringify(input) }], finishReason: { unified: /** @type {const} */ ('tool-calls'), raw: 'tool_calls' }, usage, warnings: [] })
  const model = new MockLanguageModelV4({
    doGenerate: [
      call('c1', 'write_file', { path: 'a.txt', content: 'one\n' }),
      call('c2', 'write_file', { path: 'b.txt', content: 'two\n' }),
      { content: [{ type: 'text', text: 'Wrote a.txt and b.txt.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
    ],
  })
  const cwd = mkdtempSync(join(tmpdir(), 'approve-first-'))
  const { text, asked } = await approveFirst({ model, cwd, prompt: 'Write a.txt and b.txt', approve: () => true })
  console.log(asked.map((a) => `approved: ${a.split('\n')[0]}`).join('\n'))
  console.log(text, readFileSync(join(cwd, 'a.txt'), 'utf8').trim(), readFileSync(join(cwd, 'b.txt'), 'utf8').trim())
}
