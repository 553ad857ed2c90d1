#!/usr/bin/env node
// eddie-tools <tool> '<json args>' [--yes] [--cwd DIR] [--stream]
// Runs one tool with the current directory as the workspace and prints the result as JSON.
// Confirmation: --yes approves; otherwise a TTY prompt asks; without a TTY the answer is no.
// ask_user / ask_followup_question ask on the TTY (without one they fail with ASK_UNAVAILABLE).
// --stream copies a running command's output to stderr as it comes. Background processes
// (process_start) end when the CLI exits: they belong to the process that started them.
'use strict'
const readline = require('node:readline')
const tools = require('../index.js')

function usage(code) {
  const names = tools
    .toolSpecs()
    .map((s) => `  ${s.name.padEnd(28)} ${s.family.padEnd(8)} ${s.permission}${s.mutating ? ', mutating' : ''}`)
    .join('\n')
  const out = code === 0 ? process.stdout : process.stderr
  out.write(`usage: eddie-tools <tool> ['<json args>'] [--yes] [--cwd DIR] [--stream]\n\ntools:\n${names}\n`)
  process.exit(code)
}

async function main() {
  const argv = process.argv.slice(2)
  let yes = false
  let stream = false
  let cwd = process.cwd()
  const rest = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--yes' || a === '-y') yes = true
    else if (a === '--cwd') cwd = argv[++i]
    else if (a === '--stream') stream = true
    else if (a === '--help' || a === '-h') usage(0)
    else rest.push(a)
  }
  if (rest.length < 1 || rest.length > 2) usage(2)
  const [name, json = '{}'] = rest
  let args
  try {
    args = JSON.parse(json)
  } catch (e) {
    process.stderr.write(`${JSON.stringify({ error: { code: 'INVALID_ARGUMENT', message: `arguments are not valid JSON: ${e.message}` } })}\n`)
    process.exit(2)
  }
  const confirm = async (message) => {
    if (yes) return true
    if (!process.stdin.isTTY) return false
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
    const answer = await new Promise((resolve) => rl.question(`${message} [y/N] `, resolve))
    rl.close()
    return /^(y|yes)$/i.test(answer.trim())
  }
  const ask = async (question) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
    const answer = await new Promise((resolve) => rl.question(`${question}\n> `, resolve))
    rl.close()
    return answer
  }
  const onOutput = stream ? (chunk) => process.stderr.write(chunk.text) : undefined
  const controller = new AbortController()
  process.once('SIGINT', () => controller.abort())
  try {
    const ctx = { cwd, confirm, env: process.env, signal: controller.signal, onOutput }
    if (process.stdin.isTTY) ctx.ask = ask
    const result = await tools.runTool(name, args, ctx)
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  } catch (e) {
    const error = { code: e.code, message: e.message }
    for (const k of ['exitCode', 'signal', 'timedOut', 'stdout', 'stderr']) if (k in e) error[k] = e[k]
    process.stderr.write(`${JSON.stringify({ error }, null, 2)}\n`)
    process.exit(1)
  }
}

main()
