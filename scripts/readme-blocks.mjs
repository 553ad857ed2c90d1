// Every code block of README.md and adapters/README.md, checked: `js`/`ts` blocks are compiled
// with `tsc --strict --exactOptionalPropertyTypes` against the real SDK packages (each block a
// module of its own, with the free names a snippet leaves to the reader declared by type), and
// `jsonc` blocks parsed. `sh` blocks are shell and are left to the reader.
// Run: node scripts/readme-blocks.mjs   (exits 1 and prints tsc's errors, by README line, on failure)
// Used by __test__/readme.test.mjs.
// @ts-check
import { readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const READMES = ['README.md', 'adapters/README.md']

/**
 * The fenced blocks of a markdown file: `{file, line, lang, code}` (`line`: of the opening fence).
 * @param {string} file
 */
export function extract(file) {
  const lines = readFileSync(join(root, file), 'utf8').split('\n')
  /** @type {{file: string, line: number, lang: string, code: string}[]} */
  const blocks = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i])
    if (!open) continue
    const indent = open[1].length
    const body = []
    let j = i + 1
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]); j++) body.push(lines[j].slice(indent))
    blocks.push({ file, line: i + 1, lang: open[2] || 'text', code: body.join('\n') })
    i = j
  }
  return blocks
}

/**
 * The names a snippet leaves to the reader, with their types; what a block imports decides the
 * SDK its loop variables belong to.
 * @param {string} code
 * @returns {[string, string][]}
 */
function freeNames(code) {
  /** @type {[string, string][]} */
  const names = [
    ['ctx', "import('@eddie/tools-native').ToolContext"],
    ['session', "import('@eddie/tools-native/adapters').Session"],
    ['cwd', 'string'],
    ['confirm', '(message: string) => Promise<boolean>'],
    ['ask', '(question: string) => Promise<string>'],
    ['env', 'Record<string, string>'],
    ['onOutput', "(chunk: import('@eddie/tools-native').OutputChunk) => void"],
    ['signal', 'AbortSignal'],
    ['abortSignal', 'AbortSignal'],
    ['askUser', '(message: string) => Promise<boolean>'],
    ['showDialog', '(message: string) => Promise<boolean>'],
    ['prompt', 'string'],
    ['registry', '{ register(...tools: unknown[]): void }'],
  ]
  if (/from 'openai'/.test(code)) {
    names.push(['client', "import('openai').default"], ['model', 'string'], ['messages', "import('openai').default.Chat.Completions.ChatCompletionMessageParam[]"], ['input', 'string'])
  } else if (/from '@anthropic-ai\/sdk'/.test(code)) {
    names.push(['client', "import('@anthropic-ai/sdk').default"], ['model', 'string'], ['max_tokens', 'number'], ['messages', "import('@anthropic-ai/sdk').default.MessageParam[]"])
  } else if (/@eddie\/tools-native\/langchain/.test(code)) {
    names.push(['model', '{ bindTools(tools: unknown[]): unknown }'])
  } else {
    names.push(['model', "import('ai').LanguageModel"], ['tools', "import('ai').ToolSet"])
  }
  // A name the block declares or imports itself is its own.
  const own = (/** @type {string} */ n) => new RegExp(`(\\b(const|let|var|function)\\s+${n}\\b)|(^import[^\\n]*\\b${n}\\b)|(\\{[^}\\n]*\\b${n}\\b[^}\\n]*\\}\\s*=)`, 'm').test(code)
  return names.filter(([n]) => !own(n))
}

/**
 * The declarations of a block's free names: `declare const` in TS, typed JSDoc in JS.
 * @param {string} code
 * @param {boolean} js
 */
function prelude(code, js) {
  return freeNames(code)
    .map(([n, t]) => (js ? `/** @type {${t}} */ const ${n} = /** @type {any} */ (undefined)` : `declare const ${n}: ${t}`))
    .join('\n')
}

/**
 * Compile every js/ts block and parse every jsonc block; `{ok, errors, blocks}`.
 */
export function check() {
  const blocks = READMES.flatMap(extract)
  const dir = join(root, 'target', 'readme-blocks')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  /** @type {string[]} */
  const errors = []
  /** @type {Map<string, {file: string, line: number, offset: number}>} */
  const where = new Map()
  const files = []
  for (const [n, b] of blocks.entries()) {
    if (b.lang === 'jsonc' || b.lang === 'json') {
      try {
        JSON.parse(b.code.replace(/^\s*\/\/.*$/gm, ''))
      } catch (e) {
        errors.push(`${b.file}:${b.line}: ${/** @type {Error} */ (e).message}`)
      }
      continue
    }
    if (!['js', 'ts', 'mjs', 'cjs'].includes(b.lang)) continue
    // A block that requires is CommonJS; the others are ES modules. Each is a module of its own.
    const js = b.lang !== 'ts'
    const cjs = /\brequire\(/.test(b.code) && !/^import /m.test(b.code)
    const head = prelude(b.code, js)
    const name = `block-${String(n).padStart(2, '0')}.${cjs ? (js ? 'cjs' : 'cts') : js ? 'mjs' : 'mts'}`
    const tail = cjs && js ? '' : 'export {}'
    writeFileSync(join(dir, name), `${head}\n${b.code}\n${tail}\n`)
    where.set(name, { file: b.file, line: b.line, offset: head.split('\n').length })
    files.push(name)
  }
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        allowJs: true,
        checkJs: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        types: ['node', 'vscode'],
        skipLibCheck: true,
        noUnusedLocals: false,
      },
      files,
    }),
  )
  const require = createRequire(import.meta.url)
  const tsc = join(dirname(require.resolve('typescript/package.json')), require('typescript/package.json').bin.tsc)
  const r = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', cwd: root })
  for (const line of `${r.stdout}${r.stderr}`.split('\n')) {
    const m = /(block-\d+\.[cm][tj]s)\((\d+),(\d+)\): (.*)/.exec(line)
    if (m) {
      const w = /** @type {{file: string, line: number, offset: number}} */ (where.get(m[1]))
      errors.push(`${w.file}:${w.line + Number(m[2]) - w.offset}: ${m[4]}`)
    } else if (line.trim() && r.status !== 0) errors.push(line)
  }
  if (r.status !== 0 && errors.length === 0) errors.push(`tsc exited ${r.status}`)
  return { ok: errors.length === 0, errors, blocks }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ok, errors, blocks } = check()
  const compiled = blocks.filter((b) => ['js', 'ts', 'mjs', 'cjs', 'jsonc', 'json'].includes(b.lang)).length
  if (ok) console.log(`${compiled} of ${blocks.length} README blocks compile (the rest are shell)`)
  else {
    for (const e of errors) console.error(e)
    process.exit(1)
  }
}
