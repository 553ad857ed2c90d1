// Compiled with `tsc --noEmit` only: proves the generated types fit code written for @eddie/tools.
import { builtinTools, grep, glob, type GrepData, fileRead, fileSearch, bash, fileReadTool, type ToolDefinition, type ToolContext, type ToolError, type FileReadData } from '../index.js'

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
