#!/usr/bin/env node
// eddie-tools <tool> ['<json args>' | -] [--yes] [--cwd DIR] [--stream] [--json | --text] [--sandbox MODE]
// eddie-tools help [<tool>]      eddie-tools --version
// eddie-tools mcp [--root DIR]... [--profile NAME] [--tools a,b] [--families a,b] [--max-permission LEVEL] [--confirm allow|deny]
//   serves the tools (default: the core profile) over MCP on stdio (see mcp/server.js)
// eddie-tools vscode-manifest [--write package.json] [--families a,b] [--max-permission LEVEL] [--no-dedupe] [--prefix P]
//   prints (or merges into an extension's package.json) the contributes.languageModelTools block
//   that @eddie/tools-native/vscode's registerVsCodeTools registers (see adapters/vscode.js)
//
// Runs one tool with the current directory (or --cwd) as the workspace and prints the result.
// - Arguments: a JSON object, or `-` to read it from stdin. None = `{}`.
// - Output: --json (default) prints {schema, content, data}; --text prints only `content`.
// - Confirmation: --yes approves; otherwise a TTY prompt asks; without a TTY the answer is no.
// - Exit codes: 0 done; 1 the tool failed (the error is printed to stderr as JSON with its
//   `code`); 2 usage error (unknown tool, bad JSON); 3 a confirm was declined (the result, which
//   says nothing was changed, is still printed).
// ask_user / ask_followup_question ask on the TTY (without one they fail with ASK_UNAVAILABLE).
// --sandbox workspace-write|read-only|off requires that sandbox for the commands the tool runs
// (SANDBOX_UNAVAILABLE where it cannot be enforced); without it, the default applies best effort.
// --stream copies a running command's output to stderr as it comes. Background processes
// (process_start) end when the CLI exits: they belong to the process that started them.
//
// The host path is the adapters' (`adapters/index.js`): the core's lookup (an unknown name gets
// the core's did-you-mean), one session per run, and planConfirmation for what --yes approves.
// @ts-check
'use strict'
const readline = require('node:readline')
const { allSpecs, specByName, createSession, planConfirmation, errorInfo } = require('../adapters/index.js')

/** @typedef {import('../index.js').NativeToolSpec} NativeToolSpec */

const EXIT = { ok: 0, failed: 1, usage: 2, declined: 3 }
const USAGE = `usage: eddie-tools <tool> ['<json args>' | -] [--yes [--allow-destructive]] [--cwd DIR] [--stream] [--json | --text] [--sandbox MODE]
       eddie-tools help [<tool>]
       eddie-tools mcp [--root DIR]... [--profile core|coding|review|research|browsing|all] [--tools a,b] [--families a,b] [--max-permission none|moderate|dangerous] [--output-schemas] [--confirm allow|deny]
       eddie-tools vscode-manifest [--write package.json] [--families a,b] [--max-permission LEVEL] [--no-dedupe] [--prefix P]
       eddie-tools --version

exit codes: 0 done, 1 the tool failed, 2 usage error, 3 declined, or an approval was needed and not given

--yes approves the call's own question, hooks and protected branches (each is printed on stderr);
never a destructive command's finding, which needs --allow-destructive as well (or a y at the prompt).
`

function version() {
  return require('../package.json').version
}

function list() {
  return allSpecs()
    .map((s) => `  ${s.name.padEnd(28)} ${s.family.padEnd(8)} ${s.permission}${s.mutating ? ', mutating' : ''}`)
    .join('\n')
}

/**
 * Print the usage and the tool list, and exit with `code`.
 * @param {number} code
 * @returns {never}
 */
function usage(code) {
  const out = code === 0 ? process.stdout : process.stderr
  out.write(`${USAGE}\ntools:\n${list()}\n`)
  process.exit(code)
}

/**
 * The spec of tool `name` (model, JS or another agent's name), or exits 2 with the core's
 * UNKNOWN_TOOL, which names the closest tools (and lists them as `suggestions`).
 * @param {string} name
 * @returns {NativeToolSpec}
 */
function specOf(name) {
  try {
    return specByName(name)
  } catch (e) {
    const { code, message } = errorInfo(e)
    const suggestions = /** @type {{suggestions?: string[]}} */ (e).suggestions
    return fail(EXIT.usage, code, `${message} Run \`eddie-tools help\` for the list.`, suggestions ? { suggestions } : {})
  }
}

/**
 * Print `{error: {code, message, ...extra}}` on stderr and exit with `exit`.
 * @param {number} exit
 * @param {string} code
 * @param {string} message
 * @param {Record<string, unknown>} [extra]
 * @returns {never}
 */
function fail(exit, code, message, extra = {}) {
  process.stderr.write(`${JSON.stringify({ error: { code, message, ...extra } }, null, 2)}\n`)
  process.exit(exit)
}

/**
 * A placeholder value for a schema, for the example in `help <tool>`.
 * @param {any} schema
 * @param {string} key
 * @returns {unknown}
 */
function sample(schema, key) {
  if (!schema || typeof schema !== 'object') return null
  if (schema.default !== undefined) return schema.default
  if (schema.enum) return schema.enum[0]
  if (schema.anyOf) return sample(schema.anyOf[0], key)
  const type = Array.isArray(schema.type) ? schema.type.find((/** @type {string} */ t) => t !== 'null') : schema.type
  switch (type) {
    case 'string': return /path|file|dir/i.test(key) ? 'src/index.ts' : `<${key}>`
    case 'integer': case 'number': return schema.minimum ?? 1
    case 'boolean': return false
    case 'array': return [sample(schema.items, key)]
    case 'object': return example(schema)
    default: return `<${key}>`
  }
}

/**
 * Arguments with every required property filled in.
 * @param {any} schema
 */
function example(schema) {
  /** @type {Record<string, unknown>} */
  const out = {}
  for (const key of schema.required ?? []) out[key] = sample(schema.properties?.[key], key)
  return out
}

/**
 * `help [<tool>]`: the usage, or one tool's schema and a runnable example.
 * @param {string | undefined} name
 * @returns {never}
 */
function help(name) {
  if (!name) usage(0)
  const s = specOf(name)
  const out = [
    `${s.name} (JS: ${s.jsName}) — family ${s.family}, permission ${s.permission}${s.mutating ? ', mutating' : ''}${s.confirms ? ', asks to confirm' : ''}`,
    '',
    s.description,
    '',
    'arguments (JSON Schema):',
    JSON.stringify(s.jsonSchema, null, 2),
    '',
    'example:',
    `  eddie-tools ${s.name} '${JSON.stringify(example(s.jsonSchema))}'`,
    '',
  ]
  process.stdout.write(out.join('\n'))
  process.exit(0)
}

async function readStdin() {
  /** @type {Buffer[]} */
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * `eddie-tools vscode-manifest`: the languageModelTools block, printed or merged into a package.json.
 * @param {string[]} argv
 */
function vscodeManifest(argv) {
  const fs = require('node:fs')
  /** @type {import('../adapters/vscode.js').VsCodeToolsOptions} */
  const options = {}
  let write = null
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) fail(EXIT.usage, 'INVALID_ARGUMENT', `${a} needs a value`)
      return argv[++i]
    }
    if (a === '--write') write = value()
    else if (a === '--families') options.families = /** @type {any[]} */ (value().split(',').map((f) => f.trim()).filter(Boolean))
    else if (a === '--max-permission') options.maxPermission = /** @type {any} */ (value())
    else if (a === '--no-dedupe') options.dedupe = false
    else if (a === '--prefix') options.prefix = value()
    else fail(EXIT.usage, 'INVALID_ARGUMENT', `unknown option ${a}\n${USAGE}`)
  }
  let tools
  try {
    tools = require('../adapters/vscode.js').vsCodeManifest(options)
  } catch (e) {
    fail(EXIT.usage, 'INVALID_ARGUMENT', errorInfo(e).message)
  }
  if (!write) {
    process.stdout.write(`${JSON.stringify({ contributes: { languageModelTools: tools } }, null, 2)}\n`)
    return
  }
  let pkg
  try {
    pkg = JSON.parse(fs.readFileSync(write, 'utf8'))
  } catch (e) {
    const { code, message } = errorInfo(e)
    fail(EXIT.failed, code === 'ENOENT' ? 'NOT_FOUND' : 'PARSE', `cannot read ${write}: ${message}`)
  }
  pkg.contributes = { ...(pkg.contributes ?? {}), languageModelTools: tools }
  const tmp = `${write}.${process.pid}.tmp`
  fs.writeFileSync(tmp, `${JSON.stringify(pkg, null, 2)}\n`)
  fs.renameSync(tmp, write)
  process.stderr.write(`wrote ${tools.length} languageModelTools to ${write}\n`)
}

async function main() {
  const argv = process.argv.slice(2)
  if (argv[0] === 'mcp') {
    try {
      await require('../mcp/server.js').main(argv.slice(1))
    } catch (e) {
      const { message } = errorInfo(e)
      const code = /** @type {{code?: string}} */ (e)?.code ?? 'INVALID_ARGUMENT'
      fail(EXIT.usage, code, message)
    }
    return
  }
  if (argv[0] === 'vscode-manifest') return vscodeManifest(argv.slice(1))
  let yes = false
  let allowDestructive = false
  let stream = false
  let text = false
  let cwd = process.cwd()
  /** @type {import('../index.js').SandboxMode | undefined} */
  let sandbox
  /** @type {string[]} */
  const rest = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--yes' || a === '-y') yes = true
    else if (a === '--allow-destructive') allowDestructive = true
    else if (a === '--cwd') {
      if (i + 1 >= argv.length) fail(EXIT.usage, 'INVALID_ARGUMENT', '--cwd needs a directory')
      cwd = argv[++i]
    } else if (a === '--sandbox') {
      if (i + 1 >= argv.length) fail(EXIT.usage, 'INVALID_ARGUMENT', '--sandbox needs a mode: workspace-write, read-only or off')
      sandbox = /** @type {import('../index.js').SandboxMode} */ (argv[++i])
    } else if (a === '--stream') stream = true
    else if (a === '--text') text = true
    else if (a === '--json') text = false
    else if (a === '--version' || a === '-V') {
      process.stdout.write(`${version()}\n`)
      process.exit(0)
    } else if (a === '--help' || a === '-h') usage(0)
    else if (a.startsWith('--')) fail(EXIT.usage, 'INVALID_ARGUMENT', `unknown option ${a}\n${USAGE}`)
    else rest.push(a)
  }
  if (rest[0] === 'help') help(rest[1])
  if (rest.length < 1 || rest.length > 2) usage(EXIT.usage)
  // An unknown tool is a usage error (exit 2) before anything else.
  specOf(rest[0])
  let json = rest[1] ?? '{}'
  if (json === '-') json = await readStdin()
  let args
  try {
    args = JSON.parse(json)
  } catch (e) {
    fail(EXIT.usage, 'INVALID_ARGUMENT', `arguments are not valid JSON: ${errorInfo(e).message}`)
  }
  if (allowDestructive && !yes) fail(EXIT.usage, 'INVALID_ARGUMENT', '--allow-destructive goes with --yes')
  let declined = false
  // A person at a terminal is asked every prompt the flags do not cover.
  /** @param {string} message */
  const confirm = async (message) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
    const reply = await new Promise((resolve) => rl.question(`${message} [y/N] `, resolve))
    rl.close()
    const answer = /^(y|yes)$/i.test(reply.trim())
    if (!answer) declined = true
    return answer
  }
  /** @param {string} question */
  const ask = async (question) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
    const answer = await new Promise((resolve) => rl.question(`${question}\n> `, resolve))
    rl.close()
    return answer
  }
  const tty = Boolean(process.stdin.isTTY)
  const session = createSession({
    cwd,
    env: process.env,
    sandbox,
    confirm: tty ? confirm : undefined,
    ask: tty ? ask : undefined,
    onOutput: stream ? (chunk) => process.stderr.write(chunk.text) : undefined,
  })
  // What --yes (and --allow-destructive) approve, printed first: the approver sees every prompt.
  /** @type {import('../adapters/index.js').ConfirmationPrompt['kind'][]} */
  const kinds = yes ? ['action', 'hooks', 'protected', ...(allowDestructive ? /** @type {const} */ (['destructive']) : [])] : []
  if (yes) {
    // null: nothing to ask, or the call fails before asking (the call itself reports it).
    const plan = await planConfirmation(/** @type {any} */ (rest[0]), args, session)
    for (const p of plan?.prompts ?? []) {
      const covered = kinds.includes(p.kind)
      process.stderr.write(`${covered ? 'approved by --yes' : 'NOT approved by --yes (needs --allow-destructive)'}: [${p.kind}] ${p.text}\n`)
    }
  }
  const controller = new AbortController()
  process.once('SIGINT', () => controller.abort())
  try {
    // An alias goes through as given: one (search_files) names a tool by its arguments.
    const result = await session.runDynamic(rest[0], args, { signal: controller.signal, approved: yes ? { kinds } : undefined })
    process.stdout.write(text ? `${result.content}\n` : `${JSON.stringify(result, null, 2)}\n`)
    process.exitCode = declined ? EXIT.declined : EXIT.ok
  } catch (e) {
    const { code, message } = errorInfo(e)
    /** @type {Record<string, unknown>} */
    const error = { code, message }
    const err = /** @type {Record<string, unknown>} */ (e)
    for (const k of ['exitCode', 'signal', 'timedOut', 'stdout', 'stderr']) if (k in err) error[k] = err[k]
    process.stderr.write(`${JSON.stringify({ error }, null, 2)}\n`)
    process.exitCode = declined || code === 'APPROVAL_REQUIRED' || code === 'DECLINED' ? EXIT.declined : EXIT.failed
  }
}

main()
