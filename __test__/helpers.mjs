import { mkdtempSync, mkdirSync, writeFileSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

/** A fresh workspace with `files` ({relative path: content}). */
export function workspace(files = {}) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'eddie-native-')))
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true })
    writeFileSync(join(dir, rel), content)
  }
  return dir
}

/** A ctx whose confirm answers `answer` and records every prompt. */
export function context(cwd, answer = true, extra = {}) {
  const prompts = []
  return {
    prompts,
    ctx: { cwd, confirm: async (message) => { prompts.push(message); return answer }, ...extra },
  }
}

/** Assert that `promise` rejects with an Error carrying `code` (and optionally a message). */
export async function rejectsWith(assert, promise, code, message) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof Error, 'is an Error')
    assert.equal(typeof err.code, 'string')
    assert.equal(err.code, code, `code of: ${err.message}`)
    if (message instanceof RegExp) assert.match(err.message, message)
    else if (message !== undefined) assert.equal(err.message, message)
    return true
  })
}
