#!/usr/bin/env node
// bench/git.mjs [--runs N] [--long COMMITS] [--repo DIR [--blame-file F]] [--files N] [--corpus DIR]
//
// The git family side by side, in one run, against the git CLI (a process per call, as an agent
// that shells out does) and simple-git (the npm library a TypeScript agent would use; it spawns
// git for every call): status, diff, log and blame on a small repository, and git_log of 100
// commits with file counts against `git log --numstat`. Every row checks that the results agree
// (entry counts, commit ids, numstat totals, blamed line counts) before timing.
// Then blame and log on a generated long history (--long, default 2,500 commits; 0 skips) and
// status of a generated work tree (--files, default 50,000; 0 skips).
// The rows of blame and of log with file counts also give the native call's time as the first
// call in a fresh process ("first call": a child process per sample, nothing kept or memoised
// from an earlier call); every other figure is a repeated call in this process.
// With --corpus DIR (../shared/bench/make-corpus.sh output), also status of that tree committed
// (src/ and node_modules/) into a repository, warm, against `git status --porcelain`.
// Peer: npm install --prefix bench/git   (never a root dependency). Run by hand; never in tests.
import { execFileSync, execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync, mkdirSync, cpSync, existsSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import * as tools from '../index.js'

/** A scratch folder, removed when the bench exits (the generated repositories are large). */
const scratchDirs = []
process.on('exit', () => { for (const d of scratchDirs) rmSync(d, { recursive: true, force: true }) })
function scratch(prefix) { const d = mkdtempSync(join(tmpdir(), prefix)); scratchDirs.push(d); return d }

const here = dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt }
const runs = Number(opt('--runs', 15))
const corpus = opt('--corpus', null)
const { simpleGit } = createRequire(join(here, 'git', 'package.json'))('simple-git')
const run = promisify(execFile)

const ENV = {
  ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.com',
}
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8', maxBuffer: 1 << 30 })
const cli = async (cwd, ...args) => (await run('git', args, { cwd, env: ENV, maxBuffer: 1 << 30 })).stdout

/** A small repository: 40 files, 120 commits (each edits 3 files), then a few uncommitted edits. */
function smallRepo() {
  const dir = scratch('eddie-bench-git-')
  git(dir, 'init', '-q', '-b', 'main')
  let s = ''
  for (let i = 1; i <= 120; i++) {
    const when = 1_700_000_000 + i * 60
    s += `commit refs/heads/main\nmark :${i}\nauthor Ada <ada@example.com> ${when} +0000\ncommitter Ada <ada@example.com> ${when} +0000\n`
    const msg = `commit ${i}\n`
    s += `data ${Buffer.byteLength(msg)}\n${msg}`
    if (i > 1) s += `from :${i - 1}\n`
    for (const k of [i % 40, (i * 7) % 40, (i * 13) % 40]) {
      const body = Array.from({ length: 50 }, (_, l) => `file ${k} line ${l} ${l % 10 === i % 10 ? `v${i}` : ''}`).join('\n') + '\n'
      s += `M 100644 inline src/f${k}.txt\ndata ${Buffer.byteLength(body)}\n${body}\n`
    }
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, env: ENV, input: s })
  git(dir, 'reset', '-q', '--hard', 'main')
  for (const k of [1, 2, 3]) writeFileSync(join(dir, `src/f${k}.txt`), `edited ${k}\n`.repeat(20))
  writeFileSync(join(dir, 'new.txt'), 'untracked\n')
  return dir
}

async function median(fn) {
  await fn()
  const times = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    await fn()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]
}

/** The first call in a fresh process: a child node loads the addon, makes the one call
 * `[fn, args, cwd]` once and reports its time (no kept repository handle, nothing memoised,
 * the file system cache warm). Median of `runs` children. */
const indexUrl = new URL('../index.js', import.meta.url).href
const COLD = `const t = await import(process.argv[1]); const [fn, args, cwd] = JSON.parse(process.argv[2]);
const t0 = performance.now(); const r = await t[fn](args, { cwd }); const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ ms, data: r.data != null }))`
async function coldMedian([fn, args, cwd]) {
  const times = []
  for (let i = 0; i < runs; i++) {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', COLD, indexUrl, JSON.stringify([fn, args, cwd])], { env: process.env })
    const out = JSON.parse(stdout)
    if (!out.data) throw new Error(`${fn} in a fresh process gave no data`)
    times.push(out.ms)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]
}

const rows = []
/** `cold` ([tool function, args, cwd]): also time the native call as the first call in a fresh
 * process (`coldMedian`), printed as "first call". Every other figure is a repeated call. */
async function row(name, check, sides, cold) {
  const results = {}
  for (const [side, fn] of Object.entries(sides)) results[side] = await fn()
  const ok = check(results)
  const ms = {}
  for (const [side, fn] of Object.entries(sides)) ms[side] = await median(fn)
  const r = { name, equal: ok, native: ms.native, cli: ms.cli, simpleGit: ms.simpleGit }
  r.vsCli = ms.native / ms.cli
  if (ms.simpleGit !== undefined) r.simpleGitSpeedup = ms.simpleGit / ms.native
  if (cold) {
    r.nativeFirstCall = await coldMedian(cold)
    if (ms.simpleGit !== undefined) r.simpleGitSpeedupFirstCall = ms.simpleGit / r.nativeFirstCall
  }
  rows.push(r)
  const f = (x) => (x === undefined ? '-' : `${x.toFixed(2)} ms`)
  console.log(`${name.padEnd(34)} equal=${ok}  native ${f(ms.native)}  git ${f(ms.cli)}  simple-git ${f(ms.simpleGit)}  native/git ${r.vsCli.toFixed(2)}x${r.simpleGitSpeedup ? `  simple-git/native ${r.simpleGitSpeedup.toFixed(1)}x` : ''}`)
  if (cold) console.log(`${''.padEnd(34)} first call in a fresh process: native ${f(r.nativeFirstCall)}  native/git ${(r.nativeFirstCall / ms.cli).toFixed(2)}x${r.simpleGitSpeedupFirstCall ? `  simple-git/native ${r.simpleGitSpeedupFirstCall.toFixed(1)}x` : ''}`)
}

const dir = smallRepo()
const ctx = { cwd: dir }
const sg = simpleGit(dir).env(ENV)
console.log(`small repository: ${dir} (40 files, 120 commits); runs=${runs}, median after a warm-up`)

await row('status', (r) => r.native.data.entries.length === r.cli.split('\n').filter(Boolean).length && r.simpleGit.files.length === r.native.data.entries.length, {
  native: () => tools.gitStatus({}, ctx),
  cli: () => cli(dir, 'status', '--porcelain=v2', '--untracked-files=all'),
  simpleGit: () => sg.status(),
})

const numstatTotals = (text) => text.split('\n').filter(Boolean).reduce((a, l) => { const [x, y] = l.split('\t'); return [a[0] + Number(x), a[1] + Number(y)] }, [0, 0])
await row('diff (patch + numbers)', (r) => {
  const [a, d] = numstatTotals(git(dir, 'diff', '--numstat'))
  return r.native.data.totals.additions === a && r.native.data.totals.deletions === d && r.cli.length === r.native.data.patch.length + (r.cli.length - r.native.data.patch.length) && r.simpleGit === r.cli
}, {
  native: () => tools.gitDiff({}, ctx),
  cli: () => cli(dir, 'diff'),
  simpleGit: () => sg.diff(),
})

await row('show HEAD~5 (patch + numbers)', (r) => {
  const patch = (t) => t.slice(t.indexOf('diff --git'))
  return r.native.data.patch === patch(r.cli) && patch(r.simpleGit) === r.native.data.patch && r.native.data.id === git(dir, 'rev-parse', 'HEAD~5').trim()
}, {
  native: () => tools.gitShow({ revision: 'HEAD~5' }, ctx),
  cli: () => cli(dir, 'show', 'HEAD~5'),
  simpleGit: () => sg.show(['HEAD~5']),
})

await row('log -n 10', (r) => {
  const ids = r.cli.split('\n').filter(Boolean)
  return JSON.stringify(r.native.data.commits.map((c) => c.id)) === JSON.stringify(ids) && JSON.stringify(r.simpleGit.all.map((c) => c.hash)) === JSON.stringify(ids)
}, {
  native: () => tools.gitLog({ maxCount: 10 }, ctx),
  cli: () => cli(dir, 'log', '-n', '10', '--format=%H'),
  simpleGit: () => sg.log({ maxCount: 10 }),
})

await row('blame src/f5.txt (50 lines)', (r) => {
  const lines = (t) => t.split('\n').filter((l) => l.startsWith('\t')).length
  const ours = r.native.data.hunks.reduce((a, h) => a + h.lines, 0)
  return ours === lines(r.cli) && lines(r.simpleGit) === ours
}, {
  native: () => tools.gitBlame({ file: 'src/f5.txt', revision: 'HEAD' }, ctx),
  cli: () => cli(dir, 'blame', '--porcelain', 'HEAD', '--', 'src/f5.txt'),
  simpleGit: () => sg.raw(['blame', '--porcelain', 'HEAD', '--', 'src/f5.txt']),
})

await row('log -n 100 with file counts', (r) => {
  const [a, d] = numstatTotals(r.cli.split('\n').filter((l) => /^\d+\t\d+\t/.test(l)).join('\n'))
  const ours = r.native.data.commits.flatMap((c) => c.files)
  const oa = ours.reduce((x, f) => x + (f.additions ?? 0), 0)
  const od = ours.reduce((x, f) => x + (f.deletions ?? 0), 0)
  return r.native.data.commits.length === 100 && oa === a && od === d && r.simpleGit.all.length === 100
}, {
  native: () => tools.gitLog({ maxCount: 100, files: true }, ctx),
  cli: () => cli(dir, 'log', '-n', '100', '--numstat', '--format=%H'),
  simpleGit: () => sg.log({ maxCount: 100, '--numstat': null }),
}, ['gitLog', { maxCount: 100, files: true }, dir])

/** A long history: 2,500 commits, every fifth of which grows one file (four lines appended,
 * an earlier line rewritten) and the others edit small files, made with fast-import, as a
 * stand-in for ripgrep's crates/core/flags/defs.rs (no network here to clone ripgrep). */
function longRepo(commits) {
  const dir = scratch('eddie-bench-git-long-')
  git(dir, 'init', '-q', '-b', 'main')
  const lines = []
  const parts = []
  for (let i = 1; i <= commits; i++) {
    const when = 1_700_000_000 + i * 60
    const msg = `commit ${i}\n`
    parts.push(`commit refs/heads/main\nmark :${i}\nauthor Ada <ada@example.com> ${when} +0000\ncommitter Ada <ada@example.com> ${when} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}${i > 1 ? `from :${i - 1}\n` : ''}`)
    if (i % 5 === 0) {
      for (let k = 0; k < 4; k++) lines.push(`    pub fn flag_${i}_${k}(&self) -> bool { self.value(${i * 4 + k}) }`)
      if (i > 50) lines[(i * 7919) % lines.length] = `    // rewritten in commit ${i}`
      const body = lines.join('\n') + '\n'
      parts.push(`M 100644 inline crates/core/flags/defs.rs\ndata ${Buffer.byteLength(body)}\n${body}\n`)
    } else {
      const body = `${i}\n`
      parts.push(`M 100644 inline src/s${i % 50}.txt\ndata ${Buffer.byteLength(body)}\n${body}\n`)
    }
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, env: ENV, input: parts.join(''), maxBuffer: 1 << 30 })
  git(dir, 'reset', '-q', '--hard', 'main')
  return dir
}

const longCommits = Number(opt('--long', 2500))
if (longCommits > 0) {
  const long = longRepo(longCommits)
  const lctx = { cwd: long }
  const lsg = simpleGit(long).env(ENV)
  console.log(`long history: ${long} (${longCommits} commits on crates/core/flags/defs.rs)`)
  await row('blame defs.rs (long history)', (r) => {
    const lines = (t) => t.split('\n').filter((l) => l.startsWith('\t')).length
    const ours = r.native.data.hunks.reduce((a, h) => a + h.lines, 0)
    return ours === lines(r.cli) && lines(r.simpleGit) === ours
  }, {
    native: () => tools.gitBlame({ file: 'crates/core/flags/defs.rs', revision: 'HEAD' }, lctx),
    cli: () => cli(long, 'blame', '--porcelain', 'HEAD', '--', 'crates/core/flags/defs.rs'),
    simpleGit: () => lsg.raw(['blame', '--porcelain', 'HEAD', '--', 'crates/core/flags/defs.rs']),
  }, ['gitBlame', { file: 'crates/core/flags/defs.rs', revision: 'HEAD' }, long])
  await row('log -n 100 with file counts (long)', (r) => {
    const ids = r.cli.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l))
    const [a, d] = numstatTotals(r.cli.split('\n').filter((l) => /^\d+\t\d+\t/.test(l)).join('\n'))
    const ours = r.native.data.commits.flatMap((c) => c.files)
    return JSON.stringify(r.native.data.commits.map((c) => c.id)) === JSON.stringify(ids)
      && ours.reduce((x, f) => x + (f.additions ?? 0), 0) === a && ours.reduce((x, f) => x + (f.deletions ?? 0), 0) === d
  }, {
    native: () => tools.gitLog({ maxCount: 100, files: true }, lctx),
    cli: () => cli(long, 'log', '-n', '100', '--numstat', '--format=%H'),
  }, ['gitLog', { maxCount: 100, files: true }, long])
}

// --repo DIR: a real clone (e.g. BurntSushi/ripgrep) for blame of --blame-file and log.
const real = opt('--repo', null)
if (real) {
  const file = opt('--blame-file', 'crates/core/flags/defs.rs')
  const rctx = { cwd: real }
  const rsg = simpleGit(real).env(ENV)
  console.log(`real repository: ${real} (${git(real, 'rev-list', '--count', 'HEAD').trim()} commits), blame ${file}`)
  await row(`blame ${file}`, (r) => {
    const lines = (t) => t.split('\n').filter((l) => l.startsWith('\t')).length
    const ours = r.native.data.hunks.reduce((a, h) => a + h.lines, 0)
    return ours === lines(r.cli) && lines(r.simpleGit) === ours
  }, {
    native: () => tools.gitBlame({ file, revision: 'HEAD' }, rctx),
    cli: () => cli(real, 'blame', '--porcelain', 'HEAD', '--', file),
    simpleGit: () => rsg.raw(['blame', '--porcelain', 'HEAD', '--', file]),
  }, ['gitBlame', { file, revision: 'HEAD' }, real])
  await row('log -n 100 (real)', (r) => JSON.stringify(r.native.data.commits.map((c) => c.id)) === JSON.stringify(r.cli.split('\n').filter(Boolean)), {
    native: () => tools.gitLog({ maxCount: 100 }, rctx),
    cli: () => cli(real, 'log', '-n', '100', '--format=%H'),
    simpleGit: () => rsg.log({ maxCount: 100 }),
  })
  await row('log -n 100 with file counts (real)', (r) => {
    const ids = r.cli.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l))
    const [a, d] = numstatTotals(r.cli.split('\n').filter((l) => /^\d+\t\d+\t/.test(l)).join('\n'))
    const ours = r.native.data.commits.flatMap((c) => c.files ?? [])
    return JSON.stringify(r.native.data.commits.map((c) => c.id)) === JSON.stringify(ids)
      && ours.reduce((x, f) => x + (f.additions ?? 0), 0) === a && ours.reduce((x, f) => x + (f.deletions ?? 0), 0) === d
  }, {
    native: () => tools.gitLog({ maxCount: 100, files: true }, rctx),
    cli: () => cli(real, 'log', '-n', '100', '--numstat', '--format=%H'),
    simpleGit: () => rsg.log({ maxCount: 100, '--numstat': null }),
  }, ['gitLog', { maxCount: 100, files: true }, real])
}

/** A generated work tree of `n` files (100 per folder, two levels), all committed, then a few
 * edits and new files; the index refreshed by git first so that neither side re-hashes. */
function wideRepo(n) {
  const dir = scratch('eddie-bench-git-wide-')
  git(dir, 'init', '-q', '-b', 'main')
  const parts = ['commit refs/heads/main\ncommitter Ada <ada@example.com> 1700000000 +0000\ndata 5\nwide\n']
  for (let i = 0; i < n; i++) {
    const body = `file ${i}\n`
    parts.push(`M 100644 inline d${Math.floor(i / 10000)}/e${Math.floor(i / 100) % 100}/f${i}.txt\ndata ${Buffer.byteLength(body)}\n${body}\n`)
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, env: ENV, input: parts.join(''), maxBuffer: 1 << 30 })
  git(dir, 'reset', '-q', '--hard', 'main')
  for (const i of [3, 4_321, n - 1]) writeFileSync(join(dir, `d${Math.floor(i / 10000)}/e${Math.floor(i / 100) % 100}/f${i}.txt`), 'edited\n')
  mkdirSync(join(dir, 'new'), { recursive: true })
  writeFileSync(join(dir, 'new/n.txt'), 'new\n')
  execFileSync('sleep', ['1.1'])
  git(dir, 'status', '--porcelain=v2')
  return dir
}

const wide = Number(opt('--files', 50000))
if (wide > 0) {
  const w = wideRepo(wide)
  const wctx = { cwd: w }
  const wsg = simpleGit(w).env(ENV)
  await row(`status of ${wide} files`, (r) => r.native.data.entries.length === r.cli.split('\n').filter(Boolean).length && r.native.data.entries.length === 4, {
    native: () => tools.gitStatus({}, wctx),
    cli: () => cli(w, 'status', '--porcelain=v2', '--untracked-files=all'),
    simpleGit: () => wsg.status(),
  })
}

if (corpus) {
  const big = scratch('eddie-bench-git-corpus-')
  // src/ and node_modules/ (about 50,000 files; the 200 MB data file left out), all committed.
  for (const part of ['src', 'node_modules']) cpSync(join(corpus, part), join(big, part), { recursive: true })
  git(big, 'init', '-q', '-b', 'main')
  git(big, 'add', '-A')
  git(big, 'commit', '-q', '-m', 'corpus')
  const bctx = { cwd: big }
  await row(`status of the corpus (${git(big, 'ls-files').split('\n').length - 1} files)`, (r) => r.native.data.clean === true && r.cli === '', {
    native: () => tools.gitStatus({}, bctx),
    cli: () => cli(big, 'status', '--porcelain'),
  })
}

console.log(JSON.stringify(rows, null, 1))
if (rows.some((r) => !r.equal)) {
  console.error('results differ')
  process.exitCode = 1
}
