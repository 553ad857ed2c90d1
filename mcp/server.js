// `eddie-tools mcp`: the tools of this package as an MCP server on stdio, with no dependency (our
// own JSON-RPC peer in `mcp/rpc.js` and stdio transport in `mcp/transport.js`), so that
// `npx -y @eddie/tools-native mcp` works as written.
//
// - the tools: the `core` profile by default; `--profile NAME` (core, coding, review, research,
//   browsing, all), `--tools a,b` (exactly these), `--families a,b` (those families' tools,
//   deduplicated) and `--max-permission LEVEL` choose others.
// - tools/list: each tool with its input schema and annotations (derived from its effects,
//   permission and family: see `annotationsOf`); output schemas only with `--output-schemas`
//   (a client compiles every one it gets, which made the first list slow). The listed input
//   schemas leave out `additionalProperties: false`, so that a client validating arguments
//   against them lets our documented aliases through; the server's own argument policy still
//   refuses unknown keys with a message that names the closest one.
// - tools/call: `content` (the text a model reads) plus `structuredContent` (`data`); a failure is
//   `isError` with the stable code first ("NOT_FOUND: ...").
// - confirm: every prompt a call asks (the core's one permission gate: a destructive command's
//   finding, hooks that will run, a protected branch each ask on their own) is an elicitation when
//   the client supports it. Without elicitation no one can be asked: the call fails with
//   `APPROVAL_REQUIRED` (naming what needs approval) and nothing runs, unless the server was
//   started with `--confirm allow` (the operator approves every tool's own question, hooks and
//   protected branches) and, for destructive commands, `--allow-destructive` as well.
// - policy: `--max-permission` lists only tools up to that level and refuses the others
//   (`POLICY_DENIED`) even when a client calls them by name.
// - the workspace: `--root DIR`, else the client's first `file://` root (followed when the roots
//   change). With neither there is no workspace, and so no tools: the list is empty and a call
//   fails with a message saying how to give one.
// - commands run in the default sandbox, or in `--sandbox MODE` (required: SANDBOX_UNAVAILABLE where it cannot be).
// - `notifications/cancelled` aborts the call; a call with a progressToken gets progress
//   notifications for each piece of a running command's output.
//
// The host path is the adapters' (`adapters/index.js`): their tool selection, one permission
// session for the server's life, the core's lookup (an unknown name gets the core's
// did-you-mean) and the text a model reads.
// @ts-check
'use strict'
const { fileURLToPath } = require('node:url')
const { resolve } = require('node:path')
const { modelSchema, selectTools, createSession, specByName, settle, toModelText, PERMISSIONS, PROFILE_NAMES, DEFAULT_PROFILE } = require('../adapters/index.js')
const { version } = require('../package.json')
const { EddieStdioTransport, RawJson } = require('./transport.js')
const { Peer, isMessage } = require('./rpc.js')

/**
 * @typedef {import('../index.js').NativeToolSpec} NativeToolSpec
 * @typedef {import('./server.js').ServerOptions} ServerOptions
 * @typedef {import('./server.js').McpTool} McpTool
 * @typedef {import('./server.js').CallToolResult} CallToolResult
 * @typedef {import('./server.js').EddieMcpServer} EddieMcpServer
 */
/** Families whose tools reach beyond the workspace (processes, the network, a browser). */
const OPEN_WORLD = new Set(['exec', 'web', 'browser'])
/** Tools of other families that reach beyond it: eddie's shell, and git's remotes. */
const OPEN_WORLD_TOOLS = new Set(['bash', 'git_push', 'git_pull'])
/** The protocol versions this server speaks, newest first. */
const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']

/**
 * The tools a server with these options lists: the adapters' `selectTools`. `tools`: exactly
 * these (no dedupe); else `profile`; else `families` (deduplicated); else the `core` profile.
 * `maxPermission` (and `families`) narrow any of them.
 * @param {Pick<ServerOptions, 'families' | 'maxPermission' | 'profile' | 'tools'>} [options]
 * @returns {NativeToolSpec[]}
 */
function selectSpecs({ families, maxPermission, profile, tools } = {}) {
  const fams = /** @type {import('../adapters/index.js').ToolFamily[] | undefined} */ (families)
  if (tools) return selectTools({ names: /** @type {import('../adapters/index.js').ToolRef[]} */ (tools), families: fams, maxPermission, dedupe: false })
  if (profile) return selectTools({ profile, families: fams, maxPermission })
  if (fams) return selectTools({ families: fams, maxPermission })
  return selectTools({ profile: DEFAULT_PROFILE, maxPermission })
}

/**
 * The MCP annotations of a spec:
 * - `readOnlyHint`: it changes nothing (its effects are read-only);
 * - `destructiveHint`: it changes something (a write replaces a file, a command can do anything:
 *   no tool that writes is known to be only additive);
 * - `idempotentHint`: read-only (no tool that writes is claimed idempotent);
 * - `openWorldHint`: it reaches beyond the workspace: a process, the network or a browser (the
 *   exec, web and browser families, eddie's `bash`, git's push and pull).
 * @param {NativeToolSpec} spec
 */
function annotationsOf(spec) {
  return {
    title: spec.name,
    readOnlyHint: !spec.mutating,
    destructiveHint: spec.mutating,
    idempotentHint: !spec.mutating,
    openWorldHint: OPEN_WORLD.has(spec.family) || OPEN_WORLD_TOOLS.has(spec.name),
  }
}

/**
 * The MCP tool entry of a spec (`outputSchema: true`: with the schema of its structuredContent).
 * @param {NativeToolSpec} spec
 * @param {{outputSchema?: boolean}} [options]
 * @returns {McpTool}
 */
function toMcpTool(spec, options = {}) {
  /** @type {McpTool} */
  const entry = {
    name: spec.name,
    description: spec.description,
    // Every property described (adapters' side table), and loose at the root.
    inputSchema: modelSchema(spec, { loose: true }),
    annotations: annotationsOf(spec),
  }
  if (options.outputSchema && spec.outputSchema?.type === 'object') entry.outputSchema = /** @type {McpTool['outputSchema']} */ (spec.outputSchema)
  return entry
}

/**
 * Build (without connecting) a server. Options: roots (directories), profile, tools, families,
 * maxPermission, outputSchemas, confirm ('allow' | 'deny', used when the client cannot elicit),
 * allowDestructive, sandbox.
 * @param {ServerOptions} [options]
 * @returns {EddieMcpServer}
 */
function createServer(options = {}) {
  const specs = selectSpecs(options)
  const served = new Set(specs.map((s) => s.name))
  const listing = specs.map((s) => toMcpTool(s, { outputSchema: options.outputSchemas }))
  const peer = new Peer()
  const fixedRoots = (options.roots ?? []).map((r) => resolve(r))
  /** @type {Record<string, any> | undefined} */
  let clientCapabilities
  /** @type {string | null} */
  let clientRoot = null
  // One permission session for the server's life: a moderate tool asks once, a dangerous one
  // every time. Its workspace is set before each call (the client's roots can change).
  const session = createSession({
    cwd: fixedRoots[0] ?? process.cwd(),
    sessionId: `mcp-${process.pid}-${Date.now()}`,
    maxPermission: options.maxPermission,
    sandbox: options.sandbox,
  })

  async function refreshRoots() {
    if (fixedRoots.length || !clientCapabilities?.roots) return
    try {
      const { roots } = await peer.request('roots/list', {}, { timeoutMs: 10_000 })
      const first = (Array.isArray(roots) ? roots : []).find((/** @type {{uri?: unknown}} */ r) => typeof r?.uri === 'string' && r.uri.startsWith('file://'))
      clientRoot = first ? fileURLToPath(first.uri) : null
    } catch {
      clientRoot = null
    }
    // The list depends on whether there is a workspace.
    peer.notify({ method: 'notifications/tools/list_changed' }).catch(() => {})
  }
  /** The workspace, or null when there is none (no --root, and no usable client root). */
  const workspace = () => fixedRoots[0] ?? clientRoot
  // The roots are asked for once the client is initialized and again when they change; a call
  // waits for the latest answer.
  /** @type {Promise<void> | null} */
  let rootsReady = null

  peer.onRequest('initialize', (params) => {
    clientCapabilities = params?.capabilities && typeof params.capabilities === 'object' ? params.capabilities : {}
    const asked = params?.protocolVersion
    return {
      protocolVersion: PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0],
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: 'eddie-tools', version },
    }
  })
  peer.onRequest('ping', () => ({}))
  peer.onNotification('notifications/initialized', () => {
    rootsReady = refreshRoots()
  })
  peer.onNotification('notifications/roots/list_changed', async () => {
    rootsReady = refreshRoots()
    await rootsReady
  })

  /**
   * @param {string} message
   * @param {AbortSignal} signal
   */
  async function elicit(message, signal) {
    const answer = await peer.request(
      'elicitation/create',
      {
        mode: 'form',
        message,
        requestedSchema: {
          type: 'object',
          properties: { approve: { type: 'boolean', title: 'Approve', description: message } },
          required: ['approve'],
        },
      },
      { signal },
    )
    return answer?.action === 'accept' && answer.content?.approve === true
  }
  /**
   * What the operator approved on the command line (`--confirm allow`, `--allow-destructive`).
   * @type {{kinds: import('../adapters/index.js').ConfirmationPrompt['kind'][]} | undefined}
   */
  const preApproved =
    options.confirm === 'allow'
      ? { kinds: ['action', 'hooks', 'protected', ...(options.allowDestructive ? /** @type {const} */ (['destructive']) : [])] }
      : undefined

  peer.onRequest('tools/list', async () => {
    await rootsReady
    return { tools: workspace() ? listing : [] }
  })

  /**
   * A failure as MCP tool content: the text a model reads (`CODE: message`).
   * @param {unknown} error
   * @returns {CallToolResult}
   */
  const failure = (error) => ({ isError: true, content: [{ type: 'text', text: toModelText(error) }] })

  peer.onRequest('tools/call', async (params, extra) => {
    const name = typeof params?.name === 'string' ? params.name : ''
    let spec
    try {
      // An unknown name gets the core's UNKNOWN_TOOL, which names the closest tools.
      spec = specByName(name)
    } catch (e) {
      return failure(e)
    }
    if (!served.has(spec.name)) return failure({ code: 'UNKNOWN_TOOL', message: `no tool named \`${name}\` on this server` })
    const progressToken = params?._meta?.progressToken
    let progress = 0
    const onOutput =
      progressToken === undefined
        ? undefined
        : (/** @type {import('../index.js').OutputChunk} */ chunk) => {
            progress += 1
            extra
              .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message: chunk.text.slice(-200) } })
              .catch(() => {})
          }
    await rootsReady
    const cwd = workspace()
    if (!cwd) {
      return failure({
        code: 'POLICY_DENIED',
        message: 'this server has no workspace: start it with --root DIR, or use a client that lists a file:// root. Nothing ran.',
      })
    }
    session.cwd = cwd
    const confirm = clientCapabilities?.elicitation ? (/** @type {string} */ m) => elicit(m, extra.signal) : undefined
    // `data` goes out as the JSON text the core made (never parsed here, nor stringified again:
    // the transport writes it as it is), except where an image is taken out of it.
    const dataAsJson = !(/** @type {{properties?: Record<string, unknown>} | undefined} */ (spec.outputSchema))?.properties?.image
    const settled = await settle(session, name, params?.arguments ?? {}, { signal: extra.signal, onOutput, confirm, approved: preApproved, dataAsJson })
    if (!settled.ok) return failure(settled.error)
    const { result } = settled
    /** @type {CallToolResult} */
    const out = { content: [{ type: 'text', text: settled.text }] }
    if (typeof result.dataJson === 'string') {
      // An object (`{`) is structuredContent; any other JSON value is left out, as below.
      if (result.dataJson.charCodeAt(0) === 0x7b) out.structuredContent = /** @type {any} */ (new RawJson(result.dataJson))
      return out
    }
    const data = /** @type {Record<string, any> | null} */ (result.data && typeof result.data === 'object' && !Array.isArray(result.data) ? result.data : null)
    // The browser's screenshots carry MCP image content ({type: 'image', mimeType, data}).
    const image = data?.image
    if (image?.type === 'image' && typeof image.data === 'string') out.content.push({ type: 'image', mimeType: image.mimeType, data: image.data })
    if (data) out.structuredContent = data
    return out
  })

  return {
    tools: listing,
    connect: (transport) => peer.connect(transport),
    close: () => peer.close(),
  }
}

const MCP_USAGE =
  'eddie-tools mcp [--root DIR]... [--profile core|coding|review|research|browsing|all] [--tools a,b] [--families a,b] ' +
  '[--max-permission none|moderate|dangerous] [--output-schemas] [--confirm allow|deny] [--allow-destructive] [--sandbox workspace-write|read-only|off]'

/**
 * The options of `eddie-tools mcp` (throws on a bad one, with the usage).
 * @param {string[]} argv
 * @returns {ServerOptions & {roots: string[]}}
 */
function parseArgs(argv) {
  /** @type {ServerOptions & {roots: string[]}} */
  const options = { roots: [], confirm: 'deny' }
  /** @param {string} list */
  const split = (list) => list.split(',').map((f) => f.trim()).filter(Boolean)
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value (${MCP_USAGE})`)
      return argv[++i]
    }
    if (a === '--root') options.roots.push(value())
    else if (a === '--families') options.families = split(value())
    else if (a === '--tools') options.tools = /** @type {import('../adapters/index.js').ToolName[]} */ (split(value()))
    else if (a === '--profile') {
      options.profile = /** @type {import('../adapters/index.js').ProfileName} */ (value())
      if (!PROFILE_NAMES.includes(options.profile)) throw new Error(`--profile must be one of ${PROFILE_NAMES.join(', ')}`)
    } else if (a === '--output-schemas') options.outputSchemas = true
    else if (a === '--max-permission') {
      options.maxPermission = /** @type {ServerOptions['maxPermission']} */ (value())
      if (!PERMISSIONS.includes(/** @type {import('../adapters/index.js').Permission} */ (options.maxPermission))) {
        throw new Error(`--max-permission must be one of ${PERMISSIONS.join(', ')}`)
      }
    } else if (a === '--allow-destructive') options.allowDestructive = true
    else if (a === '--sandbox') {
      options.sandbox = /** @type {import('../index.js').SandboxMode} */ (value())
      if (!['workspace-write', 'read-only', 'off'].includes(options.sandbox)) throw new Error('--sandbox must be workspace-write, read-only or off')
    } else if (a === '--confirm') {
      options.confirm = /** @type {'allow' | 'deny'} */ (value())
      if (!['allow', 'deny'].includes(options.confirm)) throw new Error('--confirm must be allow or deny')
    } else throw new Error(`unknown option ${a} (${MCP_USAGE})`)
  }
  if (options.allowDestructive && options.confirm !== 'allow') throw new Error('--allow-destructive goes with --confirm allow')
  if (options.tools && options.profile) throw new Error('give --tools or --profile, not both')
  return options
}

/**
 * `eddie-tools mcp [options]`: serve on stdio until stdin ends. A bad option throws before
 * anything is read or written on stdio (the CLI prints it on stderr and exits 2).
 * @param {string[]} argv
 */
async function main(argv) {
  const server = createServer(parseArgs(argv))
  await server.connect(new EddieStdioTransport({ schema: { safeParse: (v) => ({ success: isMessage(v) }) } }))
}

module.exports = { createServer, selectSpecs, toMcpTool, annotationsOf, main, MCP_USAGE }
