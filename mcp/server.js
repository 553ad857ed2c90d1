// `eddie-tools mcp`: every tool of this package as an MCP server on stdio, built with the official
// MCP SDK (`@modelcontextprotocol/sdk`, an optional peer dependency: installed only by those who
// serve MCP).
//
// - tools/list: each tool with its input and output schemas and annotations derived from its
//   effects. The listed input schemas leave out `additionalProperties: false`, so that a client
//   validating arguments against them lets our documented aliases through; the server's own
//   argument policy still refuses unknown keys with a message that names the closest one.
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
const { modelSchema, selectTools, createSession, specByName, settle, toModelText, PERMISSIONS } = require('../adapters/index.js')
const { version } = require('../package.json')
const { EddieStdioTransport } = require('./transport.js')

/**
 * @typedef {import('../index.js').NativeToolSpec} NativeToolSpec
 * @typedef {import('./server.js').ServerOptions} ServerOptions
 * @typedef {import('./server.js').McpTool} McpTool
 * @typedef {import('@modelcontextprotocol/sdk/types.js').CallToolResult} CallToolResult
 */
/** Families whose tools reach beyond the workspace (processes, the network, a browser). */
const OPEN_WORLD = new Set(['exec', 'web', 'browser'])

/** The official MCP SDK's server, stdio transport and message schemas (an optional peer dependency). */
function loadSdk() {
  try {
    return {
      Server: require('@modelcontextprotocol/sdk/server/index.js').Server,
      StdioServerTransport: require('@modelcontextprotocol/sdk/server/stdio.js').StdioServerTransport,
      types: require('@modelcontextprotocol/sdk/types.js'),
    }
  } catch (cause) {
    const error = /** @type {Error & {code?: string}} */ (new Error(
      'eddie-tools mcp needs the official MCP SDK, an optional peer dependency: `npm install @modelcontextprotocol/sdk` ' +
        'next to @eddie/tools-native, or run `npx -y -p @eddie/tools-native -p @modelcontextprotocol/sdk eddie-tools mcp`.',
    ))
    error.code = 'MCP_SDK_MISSING'
    error.cause = cause
    throw error
  }
}

/**
 * The tools a server with these options lists: the adapters' `selectTools`.
 * @param {Pick<ServerOptions, 'families' | 'maxPermission'>} [options]
 * @returns {NativeToolSpec[]}
 */
function selectSpecs({ families, maxPermission } = {}) {
  return selectTools({ families: /** @type {import('../adapters/index.js').ToolFamily[] | undefined} */ (families), maxPermission })
}

/**
 * The MCP tool entry of a spec.
 * @param {NativeToolSpec} spec
 * @returns {McpTool}
 */
function toMcpTool(spec) {
  /** @type {McpTool} */
  const entry = {
    name: spec.name,
    description: spec.description,
    // Every property described (adapters' side table), and loose at the root.
    inputSchema: modelSchema(spec, { loose: true }),
    annotations: {
      title: spec.name,
      readOnlyHint: !spec.mutating,
      destructiveHint: spec.mutating && spec.permission === 'dangerous',
      idempotentHint: !spec.mutating,
      openWorldHint: OPEN_WORLD.has(spec.family),
    },
  }
  if (spec.outputSchema?.type === 'object') entry.outputSchema = /** @type {McpTool['outputSchema']} */ (spec.outputSchema)
  return entry
}

/**
 * Build (without connecting) a server. Options: roots (directories), families, maxPermission,
 * confirm ('allow' | 'deny', used when the client cannot elicit).
 * @param {ServerOptions} [options]
 */
function createServer(options = {}) {
  const { Server, types } = loadSdk()
  const specs = selectSpecs(options)
  const served = new Set(specs.map((s) => s.name))
  const server = new Server({ name: 'eddie-tools', version }, { capabilities: { tools: { listChanged: true } } })
  const fixedRoots = (options.roots ?? []).map((r) => resolve(r))
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
    if (fixedRoots.length || !server.getClientCapabilities()?.roots) return
    try {
      const { roots } = await server.listRoots()
      const first = roots.find((r) => r.uri.startsWith('file://'))
      clientRoot = first ? fileURLToPath(first.uri) : null
    } catch {
      clientRoot = null
    }
    // The list depends on whether there is a workspace.
    server.sendToolListChanged().catch(() => {})
  }
  /** The workspace, or null when there is none (no --root, and no usable client root). */
  const workspace = () => fixedRoots[0] ?? clientRoot
  // The roots are asked for once the client is initialized and again when they change; a call
  // waits for the latest answer.
  /** @type {Promise<void> | null} */
  let rootsReady = null
  server.oninitialized = () => {
    rootsReady = refreshRoots()
  }
  server.setNotificationHandler(types.RootsListChangedNotificationSchema, async () => {
    rootsReady = refreshRoots()
    await rootsReady
  })

  /** @param {string} message */
  async function elicit(message) {
    const answer = await server.elicitInput({
      message,
      requestedSchema: {
        type: 'object',
        properties: { approve: { type: 'boolean', title: 'Approve', description: message } },
        required: ['approve'],
      },
    })
    return answer.action === 'accept' && answer.content?.approve === true
  }
  /**
   * What the operator approved on the command line (`--confirm allow`, `--allow-destructive`).
   * @type {{kinds: import('../adapters/index.js').ConfirmationPrompt['kind'][]} | undefined}
   */
  const preApproved =
    options.confirm === 'allow'
      ? { kinds: ['action', 'hooks', 'protected', ...(options.allowDestructive ? /** @type {const} */ (['destructive']) : [])] }
      : undefined

  server.setRequestHandler(types.ListToolsRequestSchema, async () => {
    await rootsReady
    return { tools: workspace() ? specs.map(toMcpTool) : [] }
  })

  /**
   * A failure as MCP tool content: the text a model reads (`CODE: message`).
   * @param {unknown} error
   * @returns {CallToolResult}
   */
  const failure = (error) => ({ isError: true, content: [{ type: 'text', text: toModelText(error) }] })

  server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params
    let spec
    try {
      // An unknown name gets the core's UNKNOWN_TOOL, which names the closest tools.
      spec = specByName(name)
    } catch (e) {
      return failure(e)
    }
    if (!served.has(spec.name)) return failure({ code: 'UNKNOWN_TOOL', message: `no tool named \`${name}\` on this server` })
    const progressToken = request.params._meta?.progressToken
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
    const confirm = server.getClientCapabilities()?.elicitation ? elicit : undefined
    const settled = await settle(session, name, request.params.arguments ?? {}, { signal: extra.signal, onOutput, confirm, approved: preApproved })
    if (!settled.ok) return failure(settled.error)
    const { result } = settled
    /** @type {CallToolResult} */
    const out = { content: [{ type: 'text', text: settled.text }] }
    const data = /** @type {Record<string, any> | null} */ (result.data && typeof result.data === 'object' && !Array.isArray(result.data) ? result.data : null)
    // The browser's screenshots carry MCP image content ({type: 'image', mimeType, data}).
    const image = data?.image
    if (image?.type === 'image' && typeof image.data === 'string') out.content.push({ type: 'image', mimeType: image.mimeType, data: image.data })
    if (data) out.structuredContent = data
    return out
  })
  return server
}

/**
 * `eddie-tools mcp [--root DIR]... [--families a,b] [--max-permission LEVEL] [--confirm allow|deny] [--allow-destructive] [--sandbox MODE]`
 * @param {string[]} argv
 */
async function main(argv) {
  /** @type {ServerOptions & {roots: string[]}} */
  const options = { roots: [], confirm: 'deny' }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`)
      return argv[++i]
    }
    if (a === '--root') options.roots.push(value())
    else if (a === '--families') options.families = value().split(',').map((f) => f.trim()).filter(Boolean)
    else if (a === '--max-permission') {
      options.maxPermission = /** @type {ServerOptions['maxPermission']} */ (value())
      if (!PERMISSIONS.includes(/** @type {import('../adapters/index.js').Permission} */ (options.maxPermission))) {
        throw new Error(`--max-permission must be one of ${PERMISSIONS.join(', ')}`)
      }
    }
    else if (a === '--allow-destructive') options.allowDestructive = true
    else if (a === '--sandbox') {
      options.sandbox = /** @type {import('../index.js').SandboxMode} */ (value())
      if (!['workspace-write', 'read-only', 'off'].includes(options.sandbox)) throw new Error('--sandbox must be workspace-write, read-only or off')
    } else if (a === '--confirm') {
      options.confirm = /** @type {'allow' | 'deny'} */ (value())
      if (!['allow', 'deny'].includes(options.confirm)) throw new Error('--confirm must be allow or deny')
    } else throw new Error(`unknown option ${a} (eddie-tools mcp [--root DIR]... [--families a,b] [--max-permission none|moderate|dangerous] [--confirm allow|deny] [--allow-destructive] [--sandbox workspace-write|read-only|off])`)
  }
  if (options.allowDestructive && options.confirm !== 'allow') throw new Error('--allow-destructive goes with --confirm allow')
  const server = createServer(options)
  const { types } = loadSdk()
  await server.connect(new EddieStdioTransport({ schema: types.JSONRPCMessageSchema }))
}

module.exports = { createServer, selectSpecs, toMcpTool, main }
