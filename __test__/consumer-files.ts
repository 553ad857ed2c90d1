// Compiled with `tsc --noEmit` only: the `files` family's generated types.
import { readFile, editFile, multiEdit, applyPatch, listDirectory, allTools, type ToolContext, type ToolError, type ReadFileData, type EditFileData, type ErrorCode } from '../index.js'

const ctx: ToolContext = { cwd: '/tmp', confirm: async () => true }

export async function useFiles(): Promise<number> {
  const page = await readFile({ path: 'a.txt', offset: 10, limit: 20 }, ctx)
  const data: ReadFileData = page.data
  const next: number | null = data.nextOffset
  const edit = await editFile({ path: 'a.txt', oldString: 'a', newString: 'b', expectedHash: data.hash }, ctx)
  const done: EditFileData = edit.data
  const stage = done.matches?.[0]?.stage
  await multiEdit({ path: 'a.txt', edits: [{ oldString: 'x', newString: 'y' }] }, ctx)
  const p = await applyPatch({ patch: '*** Begin Patch\n*** End Patch', dryRun: true }, ctx)
  const list = await listDirectory({ recursive: true }, ctx)
  try {
    await editFile({ path: 'a.txt', oldString: 'x', newString: 'y' }, ctx)
  } catch (e) {
    const code: ErrorCode = (e as ToolError).code
    if (code === 'STALE' || code === 'NO_MATCH' || code === 'AMBIGUOUS_MATCH') return -1
  }
  // @ts-expect-error edits is required
  await multiEdit({ path: 'a.txt' }, ctx)
  // @ts-expect-error limit is a number
  await readFile({ path: 'x', limit: 'all' }, ctx)
  return (next ?? 0) + (stage === 'indent' ? 1 : 0) + p.data.files.length + list.data.entries.length + allTools.length
}
