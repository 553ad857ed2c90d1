// Compiled with `tsc --noEmit` only: proves the generated types fit code written for @eddie/tools.
import { builtinTools, allTools, grep, glob, type GrepData, fileRead, fileSearch, bash, fileReadTool, runCommand, processStart, processRead, runTests, askUser, type ToolDefinition, type ToolContext, type ToolError, type FileReadData, type RunData, type OutputChunk } from '../index.js'

const ctx: ToolContext = { cwd: '/tmp', confirm: async (message: string) => message.length > 0, env: {} }
const defs: ToolDefinition<any, any>[] = builtinTools

export async function use(): Promise<number> {
  const page = await fileRead({ path: 'a.txt', page: 2, pageSize: 10 }, ctx)
  const data: FileReadData = page.data
  const hits = await fileSearch({ content: 'TODO', include: ['src/.*'] }, ctx)
  const first = hits.data.results[0]?.lineMatches[0]?.matches[0]?.start ?? 0
  const viaDef = await fileReadTool.handler({ path: 'b' }, ctx)
  try {
    await bash({ command: 'ls', timeoutMs: 1000 }, ctx)
  } catch (e) {
    const err = e as ToolError
    if (err.code === 'TIMEOUT') return err.exitCode ?? -1
  }
  const chunks: OutputChunk[] = []
  const live: ToolContext = { ...ctx, sessionId: 's', onOutput: (c) => { chunks.push(c) }, ask: async (q) => `answer to ${q}` }
  const ran: RunData = (await runCommand({ command: 'ls', args: ['-la'], timeout: 5, env: { A: '1', B: null } }, live)).data
  const started = await processStart({ command: 'npm', args: ['run', 'dev'], waitFor: { port: 3000, timeout: 30 } }, live)
  const chunk = await processRead({ id: started.data.id ?? 'p1', cursor: started.data.nextCursor }, live)
  const tests = (await runTests({ command: ['cargo', 'test'] }, live)).data.tests
  const answer = (await askUser({ question: 'Which?' }, live)).data.answer
  // @ts-expect-error onOutput receives a chunk object, not two strings
  await runCommand({ command: 'ls' }, { cwd: '.', onOutput: (a: string, b: string) => a + b })
  // @ts-expect-error args are strings
  await runCommand({ command: 'ls', args: [1] }, ctx)
  if (ran.status === 'declined' || !chunk.data.more || (tests && tests.failed > 0) || answer === '' || allTools.length === 0) return 0
  // @ts-expect-error path is required
  await fileRead({}, ctx)
  // @ts-expect-error confirm must return a boolean
  await fileRead({ path: 'x' }, { cwd: '.', confirm: () => 42 })
  // @ts-expect-error pageSize is a number
  await fileRead({ path: 'x', pageSize: 'big' }, ctx)
  const found: GrepData = (await grep({ pattern: 'TODO', include: ['*.ts'], context: 2, outputMode: 'content' }, ctx)).data
  const lines = found.matches?.[0]?.blocks[0]?.lines.length ?? 0
  const paths = (await glob({ pattern: '**/*.ts', sortBy: 'mtime' }, ctx)).data.files.length + found.ignored.total
  // @ts-expect-error outputMode is an enum
  await grep({ pattern: 'x', outputMode: 'lines' }, ctx)
  return data.totalPages + first + defs.length + viaDef.content.length + lines + paths
}
