// Every code block of README.md and adapters/README.md compiles (tsc --strict with
// exactOptionalPropertyTypes, against the real SDK packages): scripts/readme-blocks.mjs.
import test from 'node:test'
import assert from 'node:assert/strict'
import { check, extract, READMES } from '../scripts/readme-blocks.mjs'

test('README code blocks: every js/ts block compiles, every jsonc block parses', () => {
  const { ok, errors, blocks } = check()
  assert.ok(blocks.filter((b) => ['js', 'ts'].includes(b.lang)).length >= 10, 'the blocks were found')
  assert.ok(ok, errors.join('\n'))
})

test('README code blocks: the extractor finds fenced blocks with their language and line', () => {
  for (const file of READMES) {
    for (const b of extract(file)) {
      assert.ok(b.line > 0 && typeof b.code === 'string', `${file}:${b.line}`)
      assert.ok(!b.code.includes('```'), `${file}:${b.line}: a block ends at its fence`)
    }
  }
  assert.ok(extract('README.md').some((b) => b.lang === 'sh' && /npx -y @eddie\/tools-native mcp/.test(b.code)))
})
