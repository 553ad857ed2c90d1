// MCP side by side: the official reference filesystem server
// (@modelcontextprotocol/server-filesystem, installed under bench/mcp/) against `eddie-tools mcp`,
// both driven by the official SDK client over stdio in one run, on the corpus from
// ../shared/bench/make-corpus.sh. For each job the results are checked equal before timing.
//
//   npm install --prefix bench/mcp
//   bash ../shared/bench/make-corpus.sh /tmp/corpus
//   node bench/mcp.mjs /tmp/corpus [rounds]
//
// Jobs (the reference's tool → ours):
//   search_files {pattern: '**/*.ts'}  → glob {pattern, includeHidden, includeDependencies, respectGitignore: false}
//   directory_tree                     → get_folder_tree_structure {includeHidden, includeDependencies}
//   read_text_file (3 files, small to 1.6 MB) → read_file {limit: 0, lineNumbers: false}
import assert from 'node:assert/strict'
import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const corpus = process.argv[2]
const rounds = Number(process.argv[3] ?? 5)
if (!corpus) throw new Error('usage: node bench/mcp.mjs CORPUS_DIR [rounds]')
const require = createRequire(join(here, 'mcp', 'package.json'))
const referenceMain = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')

async function connect(args) {
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }))
  return client
}

const reference = await connect([referenceMain, corpus])
const ours = await connect([join(root, 'bin/eddie-tools.js'), 'mcp', '--root', corpus, '--tools', 'glob,get_folder_tree_structure,read_file'])

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 })
  if (r.isError) throw new Error(`${name}: ${r.content.map((c) => c.text).join('')}`)
  return r
}

/** Median of `rounds` timed calls (after one warm-up). */
async function time(client, name, args) {
  await call(client, name, args)
  const ms = []
  for (let i = 0; i < rounds; i++) {
    const t = performance.now()
    await call(client, name, args)
    ms.push(performance.now() - t)
  }
  ms.sort((a, b) => a - b)
  return ms[Math.floor(ms.length / 2)]
}

const rows = []
async function job(label, refName, refArgs, ourName, ourArgs, check) {
  check(await call(reference, refName, refArgs), await call(ours, ourName, ourArgs))
  // Interleave the two so that machine noise hits both alike.
  const ref = await time(reference, refName, refArgs)
  const our = await time(ours, ourName, ourArgs)
  rows.push({ job: label, reference_ms: ref.toFixed(1), ours_ms: our.toFixed(1), speedup: `${(ref / our).toFixed(1)}x` })
}

const sub = 'src'
const abs = join(corpus, sub)

await job('search **/*.ts', 'search_files', { path: abs, pattern: '**/*.ts' },
  'glob', { path: sub, pattern: '**/*.ts', includeHidden: true, includeDependencies: true, respectGitignore: false, maxResults: 1_000_000 },
  (ref, our) => {
    const theirs = ref.content[0].text.split('\n').filter((p) => !statSync(p).isDirectory()).map((p) => relative(corpus, p).split(sep).join('/')).sort()
    const mine = [...our.structuredContent.files].sort()
    assert.equal(mine.length, theirs.length)
    assert.deepEqual(mine, theirs)
  })

await job('tree', 'directory_tree', { path: abs },
  'get_folder_tree_structure', { path: sub, includeHidden: true, includeDependencies: true, maxEntries: 10_000_000 },
  (ref, our) => {
    const names = (entries, prefix, out) => {
      for (const e of entries) {
        out.push(`${prefix}${e.name}:${e.type}`)
        if (e.children ?? e.entries) names(e.children ?? e.entries, `${prefix}${e.name}/`, out)
      }
      return out
    }
    const theirs = names(JSON.parse(ref.content[0].text), '', []).sort()
    const mine = names(our.structuredContent.entries, '', []).sort()
    assert.equal(mine.length, theirs.length)
    assert.deepEqual(mine, theirs)
  })

for (const file of ['src/lodash/package.json', 'src/moment/moment.js', 'src/mathjax-full/es5/tex-svg-full.js']) {
  const bytes = statSync(join(corpus, file)).size
  await job(`read ${file.split('/').pop()} (${(bytes / 1024).toFixed(0)} kB)`, 'read_text_file', { path: join(corpus, file) },
    'read_file', { path: file, limit: 0, lineNumbers: false, maxBytes: 100_000_000, maxLineLength: 100_000_000 },
    (ref, our) => {
      const text = readFileSync(join(corpus, file), 'utf8')
      assert.equal(ref.content[0].text, text)
      // read_file shows lines: the file's last line break is not repeated after the last line.
      assert.equal(our.content[0].text, text.endsWith('\n') ? text.slice(0, -1) : text)
    })
}

console.table(rows)
await reference.close()
await ours.close()
