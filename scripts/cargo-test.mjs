#!/usr/bin/env node
// `npm test`'s Rust part: `cargo test --workspace` for the host triple, named with --target.
// `napi build` always passes --target, so the addon's artifacts live under target/<triple>/;
// with the same --target the tests reuse the dependencies `npm install` compiled in a clone (its
// dev build of the addon) instead of compiling all of them a second time under target/debug.
// Extra arguments go to cargo (`node scripts/cargo-test.mjs -- --nocapture`).
import { spawnSync } from 'node:child_process'

const rustc = spawnSync('rustc', ['-vV'], { encoding: 'utf8' })
if (rustc.error || rustc.status !== 0) {
  process.stderr.write('the Rust tests need Rust stable (cargo, rustc): https://rustup.rs\n')
  process.exit(1)
}
const host = /^host: (\S+)$/m.exec(rustc.stdout)?.[1]
if (!host) throw new Error(`no host triple in rustc -vV:\n${rustc.stdout}`)
const r = spawnSync('cargo', ['test', '--workspace', '--target', host, ...process.argv.slice(2)], { stdio: 'inherit' })
if (r.error) throw r.error
process.exit(r.status ?? 1)
