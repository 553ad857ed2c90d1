// Shared pieces of the framework adapters (`@eddie/tools-native/ai-sdk`, `/openai`, `/anthropic`,
// `/langchain`, `/vscode`): one permission session, tool selection, the text a model reads, and
// the confirm text a call would show (for hosts that approve before the call).
//
// Everything is derived from `toolSpecs()`, so a new family is covered without touching this file.
// @ts-check
'use strict'
const { randomUUID } = require('node:crypto')
const native = require('../index.js')

/**
 * @typedef {import('../index.js').NativeToolSpec} NativeToolSpec
 * @typedef {import('../index.js').ToolContext} ToolContext
 * @typedef {import('../index.js').ToolResult} ToolResult
 * @typedef {import('./index.js').Permission} Permission
 * @typedef {import('./index.js').ToolRef} ToolRef
 * @typedef {import('./index.js').SelectOptions} SelectOptions
 * @typedef {import('./index.js').SessionOptions} SessionOptions
 * @typedef {import('./index.js').CallOptions} CallOptions
 * @typedef {import('./index.js').Session} Session
 * @typedef {import('./index.js').ResultShape} ResultShape
 * @typedef {import('./index.js').ConfirmationPlan} ConfirmationPlan
 * @typedef {import('./index.js').ProfileName} ProfileName
 */

/** @type {Permission[]} */
const PERMISSIONS = ['none', 'moderate', 'dangerous']

/**
 * Overlapping pairs: `[kept, dropped]` with `dedupe: true` (the richer tool of the newer family
 * is kept); `dedupe: 'eddie'` keeps the other one (eddie's verbatim built-in). A pair is only
 * thinned when both of its tools were selected.
 */
/** @type {[string, string][]} */
const OVERLAPS = [
  ['read_file', 'file_read'],
  ['write_file', 'file_write'],
  ['run', 'bash'],
  ['grep', 'file_search'],
  ['project_map', 'get_folder_tree_structure'],
  ['ask_followup_question', 'ask_user'],
]

/** @type {NativeToolSpec[] | null} */
let specCache = null
/** toolSpecs(), read once (the registry is fixed for the life of the process). */
function allSpecs() {
  if (!specCache) specCache = native.toolSpecs()
  return specCache
}

/** @type {Record<string, string> | null} */
let aliasCache = null
/** The other agents' tool names (`read`, `execute_command`, ...) and the tools they run. */
function aliases() {
  if (!aliasCache) aliasCache = native.toolAliases()
  return aliasCache
}

/** Whether `name` is another agent's name for a tool (`toolAliases()`). */
function isAlias(/** @type {string} */ name) {
  return Object.prototype.hasOwnProperty.call(aliases(), name)
}

/**
 * The spec of a tool by its model name, JS name, or another agent's name (`toolAliases()`).
 * Otherwise throws the core's `UNKNOWN_TOOL`, whose message names the closest tools ("Unknown
 * tool: grepp. Did you mean `grep`?") and whose `suggestions` lists them.
 * @param {string} name
 * @returns {NativeToolSpec}
 */
function specByName(name) {
  const canonical = isAlias(name) ? aliases()[name] : name
  return allSpecs().find((s) => s.name === canonical || s.jsName === canonical) ?? native.toolSpec(String(name))
}

/**
 * The name to call `name` by: an alias goes through as given (a seed's spelling can imply
 * arguments, and `search_files` picks its tool by its arguments), anything else as its model name.
 * @param {string} name
 */
function calledName(name) {
  return isAlias(name) ? name : specByName(name).name
}

/**
 * The named tool sets. `core` (the default of every adapter and of the MCP server) is what a coding
 * agent needs on every turn; `all` is every tool, with `dedupe: true`. Every list is in canonical
 * model names; `profileTools(name)` gives a copy.
 * @type {Readonly<Record<Exclude<ProfileName, 'all'>, readonly string[]>>}
 */
const PROFILES = Object.freeze({
  // No list_directory: glob lists a folder (`*`), and the set stays under 20 kB in every framework.
  core: ['read_file', 'write_file', 'edit_file', 'apply_patch', 'grep', 'glob', 'run', 'git_status', 'git_diff'],
  coding: [
    'read_file', 'write_file', 'edit_file', 'multi_edit', 'apply_patch', 'move_file', 'delete_file', 'grep', 'glob', 'list_directory',
    'get_file_info', 'list_symbols', 'find_symbol', 'find_references', 'project_map', 'run', 'process_start', 'process_read',
    'process_kill', 'run_tests', 'lint', 'typecheck', 'git_status', 'git_diff', 'git_log', 'git_show', 'git_stage', 'git_commit', 'git_branch',
  ],
  review: [
    'read_file', 'grep', 'glob', 'list_directory', 'get_file_info', 'list_symbols', 'find_symbol', 'find_references', 'project_map',
    'assess_patch_risk', 'git_status', 'git_diff', 'git_log', 'git_show', 'git_blame',
  ],
  research: ['read_file', 'grep', 'glob', 'list_directory', 'web_search', 'web_fetch', 'check_url', 'download', 'memory_save', 'memory_recall', 'memory_list'],
  browsing: [
    'browser_status', 'browser_navigate', 'browser_read_page', 'browser_screenshot', 'browser_click', 'browser_type', 'browser_find',
    'browser_get_tabs', 'browser_new_tab', 'browser_close_tab', 'browser_console', 'browser_network', 'web_fetch', 'web_search',
  ],
})
/** @type {ProfileName[]} */
const PROFILE_NAMES = [.../** @type {ProfileName[]} */ (Object.keys(PROFILES)), 'all']
/** The set every adapter and the MCP server use when given no tools. */
const DEFAULT_PROFILE = 'core'

/**
 * The model names of a profile (`all`: every tool, deduplicated).
 * @param {ProfileName} name
 * @returns {string[]}
 */
function profileTools(name) {
  if (name === 'all') return selectTools({ dedupe: true }).map((s) => s.name)
  if (!Object.prototype.hasOwnProperty.call(PROFILES, name)) throw new RangeError(`unknown profile \`${name}\`; the profiles are ${PROFILE_NAMES.join(', ')}`)
  return [...PROFILES[/** @type {Exclude<ProfileName, 'all'>} */ (name)]]
}

/**
 * The specs of `tools`: undefined or null = the default profile (`core`); a profile name
 * (`'coding'`, `'all'`, ...); otherwise names (model, JS or another agent's), specs, or
 * ToolDefinitions (`allTools`, `builtinTools`, anything with a `name`), as given.
 * @param {readonly ToolRef[] | ProfileName | null} [tools]
 * @returns {NativeToolSpec[]}
 */
function resolveTools(tools) {
  if (tools === undefined || tools === null) return resolveTools(/** @type {ToolRef[]} */ (profileTools(DEFAULT_PROFILE)))
  if (typeof tools === 'string') return resolveTools(/** @type {ToolRef[]} */ (profileTools(tools)))
  if (!Array.isArray(tools)) throw new TypeError('tools must be a profile name or an array of tool names, specs or definitions')
  const seen = new Set()
  const out = []
  for (const t of tools) {
    const spec = specByName(typeof t === 'string' ? t : /** @type {{name?: string} | null | undefined} */ (t)?.name ?? String(t))
    if (!seen.has(spec.name)) {
      seen.add(spec.name)
      out.push(spec)
    }
  }
  return out
}

/**
 * Choose tools: `profile` or `names` (only these; default every tool), `families` (default all),
 * `maxPermission` ('none' | 'moderate' | 'dangerous', default 'dangerous'), and `dedupe` (default
 * true: drop eddie's tool of each overlapping pair; 'eddie': drop the other one; false: keep
 * both). Returns specs, in registry order.
 * @param {SelectOptions} [options]
 * @returns {NativeToolSpec[]}
 */
function selectTools(options = {}) {
  const { families, maxPermission = 'dangerous', dedupe = true, names, profile } = options
  const max = PERMISSIONS.indexOf(maxPermission)
  if (max < 0) throw new RangeError(`maxPermission must be one of ${PERMISSIONS.join(', ')}`)
  const specs = allSpecs()
  const known = new Set(specs.map((s) => s.family))
  for (const f of /** @type {string[]} */ (families ?? [])) {
    if (!known.has(f)) throw new RangeError(`unknown family \`${f}\`; the families are ${[...known].join(', ')}`)
  }
  if (names && profile) throw new TypeError('give names or profile, not both')
  const picked = names ?? (profile ? /** @type {ToolRef[]} */ (profileTools(profile)) : null)
  const only = picked ? new Set(resolveTools(picked).map((s) => s.name)) : null
  let chosen = specs.filter(
    (s) =>
      (!families || /** @type {string[]} */ (families).includes(s.family)) && PERMISSIONS.indexOf(s.permission) <= max && (!only || only.has(s.name)),
  )
  if (dedupe) {
    const present = new Set(chosen.map((s) => s.name))
    const drop = new Set()
    for (const [kept, dropped] of OVERLAPS) {
      if (present.has(kept) && present.has(dropped)) drop.add(dedupe === 'eddie' ? kept : dropped)
    }
    chosen = chosen.filter((s) => !drop.has(s.name))
  }
  return chosen
}

/**
 * One permission session shared by every call an adapter makes: a `moderate` tool asks `confirm`
 * once per session, a `dangerous` one on every call (the core's one gate). Each call gets its own
 * ctx (its own `signal`) with the same `sessionId`. `maxPermission` is the host's ceiling (a tool
 * above it is refused with `POLICY_DENIED`). `session.end()` forgets what the session allowed.
 * @param {SessionOptions | Session} [options]
 * @returns {Session}
 */
function createSession(options = {}) {
  if (isSession(options)) return options
  const { cwd = process.cwd(), confirm, ask, env, onOutput, maxPermission, sandbox, resultShape = 'text', sessionId = `eddie-session-${randomUUID()}` } = options
  if (!RESULT_SHAPES.includes(resultShape)) throw new RangeError(`resultShape must be one of ${RESULT_SHAPES.join(', ')}`)
  /** @type {Session} */
  const session = {
    sessionId,
    cwd,
    env,
    sandbox,
    resultShape,
    /**
     * The ctx of one call. `approved`: what the host approved before the call (the prompts it
     * showed, as `planConfirmation` returns them, or `true` for the tool's own question only);
     * anything else the call asks still goes to `confirm`.
     */
    ctx(call = {}) {
      /** @type {ToolContext} */
      const ctx = { cwd: session.cwd, sessionId: session.sessionId }
      if (session.env !== undefined) ctx.env = session.env
      if (maxPermission !== undefined) ctx.maxPermission = maxPermission
      if (session.sandbox !== undefined) ctx.sandbox = session.sandbox
      if (call.approved !== undefined && call.approved !== null && /** @type {unknown} */ (call.approved) !== false) {
        // A plan, its prompts, or their texts: the core takes each form.
        ctx.approved = /** @type {ToolContext['approved']} */ (call.approved)
      }
      const c = call.confirm ?? confirm
      if (c) ctx.confirm = c
      if (ask) ctx.ask = ask
      const out = call.onOutput ?? onOutput
      if (out) ctx.onOutput = out
      if (call.signal) ctx.signal = call.signal
      if (call.dataAsJson) ctx.dataAsJson = true
      return ctx
    },
    /**
     * Run one tool in this session; resolves to the result or rejects with the coded error. Another
     * agent's name (`execute_command`) runs with that agent's behaviour (see toolAliases()).
     */
    run: /** @type {Session['run']} */ (
      (/** @type {string} */ name, /** @type {Record<string, unknown>} */ args, /** @type {CallOptions} */ call = {}) =>
        native.runTool(calledName(name), args ?? {}, session.ctx(call))
    ),
    /**
     * `run` for a name known only at run time (a model's tool call): the same call, typed loosely.
     * The core still refuses an unknown name (UNKNOWN_TOOL) or a bad argument (INVALID_ARGUMENT).
     */
    runDynamic(/** @type {string} */ name, /** @type {unknown} */ args, /** @type {CallOptions} */ call = {}) {
      return native.runTool(calledName(name), /** @type {Record<string, unknown>} */ (args ?? {}), session.ctx(call))
    },
    /** End the session: the tools it allowed ask again. */
    end() {
      return native.endSession(session.sessionId)
    },
  }
  return session
}

/**
 * Whether `options` is already a session (adapters accept either).
 * @param {SessionOptions | Session} options
 * @returns {options is Session}
 */
function isSession(options) {
  return Boolean(options) && typeof (/** @type {Session} */ (options).run) === 'function' && typeof (/** @type {Session} */ (options).ctx) === 'function'
}

/**
 * The input schema a model sees: the tool's JSON Schema with `type: 'object'` (its `modelSchema`: the
 * property descriptions are the Rust `Args`' doc comments, or eddie's `contract_docs`). `loose`: without the root
 * `additionalProperties: false`, for hosts that validate arguments themselves (our aliases must
 * reach the core, which refuses unknown keys with a better message).
 * @param {NativeToolSpec} spec
 * @param {{loose?: boolean}} [options]
 * @returns {{type: 'object', [key: string]: unknown}}
 */
function modelSchema(spec, { loose = false } = {}) {
  const schema = { type: 'object', ...(spec.modelSchema ?? spec.jsonSchema) }
  if (loose) delete schema.additionalProperties
  return schema
}

/**
 * `{code, message}` of anything thrown (`INTERNAL` when it carries no code).
 * @param {any} error
 * @returns {{code: string, message: string}}
 */
function errorInfo(error) {
  const code = typeof error?.code === 'string' ? error.code : 'INTERNAL'
  const message = typeof error?.message === 'string' ? error.message : String(error)
  return { code, message }
}

/**
 * The text a model reads: a result's `content`, or `CODE: message` for an error.
 * @param {any} resultOrError
 * @returns {string}
 */
function toModelText(resultOrError) {
  if (resultOrError && typeof resultOrError === 'object' && typeof resultOrError.content === 'string' && !(resultOrError instanceof Error)) {
    return resultOrError.content
  }
  const { code, message } = errorInfo(resultOrError)
  return message.startsWith(`${code}:`) ? message : `${code}: ${message}`
}

/**
 * What a model reads: `text` (the result's text), or a seed's envelope as JSON.
 * @type {ResultShape[]}
 */
const RESULT_SHAPES = ['text', 'stack', 'floyd']

/**
 * The extra properties of a coded error (`path`, `candidates`, ...), or undefined.
 * @param {unknown} error
 */
function errorDetails(error) {
  if (!error || typeof error !== 'object') return undefined
  /** @type {Record<string, unknown>} */
  const details = {}
  for (const [k, v] of Object.entries(error)) if (!['code', 'message', 'name', 'stack', 'cause'].includes(k)) details[k] = v
  return Object.keys(details).length ? details : undefined
}

/**
 * A result (or error) in the envelope a seed's prompts expect, as a plain object:
 * - `'stack'` (Stack 2.9): `{success: true, result}` or `{success: false, error: 'CODE: message'}`;
 * - `'floyd'` (Floyd): `{success: true, data}` or `{success: false, error: {code, message, details?}}`;
 * where `result`/`data` is the tool's `data` with the text a model reads as `content` (unless
 * `data` has its own). `'text'` gives `{success, text}`.
 * @param {ResultShape} shape
 * @param {any} resultOrError
 */
function toResultShape(shape, resultOrError) {
  if (!RESULT_SHAPES.includes(shape)) throw new RangeError(`resultShape must be one of ${RESULT_SHAPES.join(', ')}`)
  const ok = resultOrError && typeof resultOrError === 'object' && typeof resultOrError.content === 'string' && !(resultOrError instanceof Error)
  if (ok) {
    const { content, data } = /** @type {ToolResult} */ (resultOrError)
    const body = data && typeof data === 'object' && !Array.isArray(data) ? { content, ...data } : { content, value: data }
    if (shape === 'stack') return { success: true, result: body }
    if (shape === 'floyd') return { success: true, data: body }
    return { success: true, text: content }
  }
  const { code, message } = errorInfo(resultOrError)
  if (shape === 'floyd') {
    const details = errorDetails(resultOrError)
    return { success: false, error: details ? { code, message, details } : { code, message } }
  }
  return { success: false, error: toModelText(resultOrError) }
}

/**
 * The text a model reads for `resultOrError` in `shape`: the text, or the envelope as JSON.
 * @param {ResultShape | undefined} shape
 * @param {unknown} resultOrError
 */
function shapedText(shape, resultOrError) {
  return shape === 'text' || shape === undefined ? toModelText(resultOrError) : JSON.stringify(toResultShape(shape, resultOrError))
}

/**
 * Run a call and never throw: `{ok: true, result, text}` or `{ok: false, error, text}` where
 * `text` is what the model should read (in the session's `resultShape`).
 * @param {Session} session
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @param {CallOptions} [call]
 */
async function settle(session, name, args, call) {
  try {
    const result = await session.runDynamic(name, args, call)
    return { ok: true, result, text: shapedText(session.resultShape, result) }
  } catch (error) {
    return { ok: false, error, text: shapedText(session.resultShape, error) }
  }
}

/**
 * Stack 2.9's `get_tool_schemas()`: every tool (or those of `tools`) as `{name, description,
 * parameters}`, parameters being the JSON Schema a model fills.
 * @param {readonly ToolRef[] | null} [tools]
 */
function getToolSchemas(tools) {
  return resolveTools(tools).map((spec) => ({ name: spec.name, description: spec.description, parameters: modelSchema(spec) }))
}

/**
 * Stack 2.9's `get_tool(name)`: a function of the arguments that runs the tool in `session` and
 * resolves to Stack's `{success, result | error}` (it never rejects). `name` may be Stack's own
 * (`read`, `search`, `run`, ...).
 * @param {string} name
 * @param {Session | SessionOptions} [session]
 */
function getTool(name, session) {
  specByName(name)
  const s = createSession(session)
  return async (args = {}) => {
    try {
      return toResultShape('stack', await s.runDynamic(name, args))
    } catch (error) {
      return toResultShape('stack', error)
    }
  }
}

/**
 * Whether a call of `name` in `session` would ask the user now, by its level: false for tools
 * that never ask and for `moderate` tools the session has already granted (as the read-only
 * `check_permission` tool tells); true otherwise (and when in doubt). `planConfirmation` is exact
 * for a given call (a destructive command asks even when the tool is granted).
 * @param {string} name
 * @param {Session | SessionOptions} [session]
 */
async function wouldAsk(name, session) {
  const spec = specByName(name)
  if (!spec.confirms) return false
  if (!session) return true
  const s = createSession(session)
  try {
    const { data } = await native.runTool('check_permission', { toolName: spec.name }, { cwd: s.cwd, sessionId: s.sessionId })
    return /** @type {{willAsk?: boolean} | undefined} */ (data)?.willAsk !== false
  } catch {
    return true
  }
}

/**
 * Every prompt a call would ask now, computed without changing anything, for hosts that approve
 * before the call (AI SDK approvals, VS Code `prepareInvocation`, a CLI's `--yes`): `{prompts:
 * [{kind, text}], message}` where `message` is every prompt's text, ready to show; `null` when
 * the call would not ask (a tool that never asks, a `moderate` tool the session has granted) or
 * fails before asking (the real call will report it). Show `message`, then run the call with
 * `approved: plan` (or `plan.prompts`): the approval covers exactly these prompts.
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @param {Session | SessionOptions} [session]
 * @returns {Promise<ConfirmationPlan | null>}
 */
async function planConfirmation(name, args, session) {
  const spec = specByName(name)
  if (!spec.confirms) return null
  const s = session ? createSession(session) : createSession()
  const ctx = s.ctx()
  delete ctx.confirm
  let prompts
  try {
    prompts = await native.planCall(calledName(name), args ?? {}, ctx)
  } catch {
    return null
  }
  if (!prompts.length) return null
  return { prompts: /** @type {ConfirmationPlan['prompts']} */ (prompts), message: prompts.map((p) => p.text).join('\n\n') }
}

/**
 * The text of `planConfirmation` (every prompt the call would ask), or null.
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @param {Session | SessionOptions} [session]
 */
async function describeConfirmation(name, args, session) {
  const plan = await planConfirmation(name, args, session)
  return plan ? plan.message : null
}

/**
 * Remove `null` members of plain objects, recursively (the core already treats null as absent).
 * @param {unknown} value
 * @returns {any}
 */
function dropNulls(value) {
  if (Array.isArray(value)) return value.map(dropNulls)
  if (value && typeof value === 'object') {
    /** @type {Record<string, unknown>} */
    const out = {}
    for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = dropNulls(v)
    return out
  }
  return value
}

module.exports = {
  OVERLAPS,
  PROFILES,
  PROFILE_NAMES,
  DEFAULT_PROFILE,
  profileTools,
  PERMISSIONS,
  allSpecs,
  specByName,
  calledName,
  modelSchema,
  resolveTools,
  selectTools,
  createSession,
  errorInfo,
  toModelText,
  toResultShape,
  RESULT_SHAPES,
  settle,
  getToolSchemas,
  getTool,
  describeConfirmation,
  planConfirmation,
  wouldAsk,
  dropNulls,
  runTool: native.runTool,
  toolSpecs: native.toolSpecs,
}
