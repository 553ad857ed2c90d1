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
'use strict'
const { fileURLToPath } = require('node:url')
const { resolve } = require('node:path')
const tools = require('../index.js')
const { modelSchema } = require('../adapters/index.js')
const { version } = require('../package.json')
const { EddieStdioTransport } = require('./transport.js')

const PERMISSIONS = ['none', 'moderate', 'dangerous']
/** Families whose tools reach beyond the workspace (processes, the network, a browser). */
const OPEN_WORLD = new Set(['exec', 'web', 'browser'])

function loadSdk() {
  try {
    return {
      Server: require('@modelcontextprotocol/sdk/server/index.js').Server,
      StdioServerTransport: require('@modelcontextprotocol/sdk/server/stdio.js').StdioServerTransport,
      types: require('@modelcontextprotocol/sdk/types.js'),
    }
  } catch (cause) {
    const error = new Error(
      'eddie-tools mcp needs the official MCP SDK, an optional peer dependency: `npm install @modelcontextprotocol/sdk` ' +
        'next to @eddie/tools-native, or run `npx -y -p @eddie/tools-native -p @modelcontextprotocol/sdk eddie-tools mcp`.',
    )
    error.code = 'MCP_SDK_MISSING'
    error.cause = cause
    throw error
  }
}

/** The tools a server with these options lists. */
function selectSpecs({ families, maxPermission = 'dangerous' } = {}) {
  const max = PERMISSIONS.indexOf(maxPermission)
  if (max < 0) throw new Error(`--max-permission must be one of ${PERMISSIONS.join(', ')}`)
  const specs = tools.toolSpecs()
  const known = new Set(specs.map((s) => s.family))
  for (const f of families ?? []) if (!known.has(f)) throw new Error(`unknown family \`${f}\`; the families are ${[...known].join(', ')}`)
  return specs.filter((s) => (!families || families.includes(s.family)) && PERMISSIONS.indexOf(s.permission) <= max)
}

/** The MCP tool entry of a spec. */
function toMcpTool(spec) {
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
  if (spec.outputSchema?.type === 'object') entry.outputSchema = spec.outputSchema
  return entry
}

/**
 * Build (without connecting) a server. Options: roots (directories), families, maxPermission,
 * confirm ('allow' | 'deny', used when the client cannot elicit).
 */
function createServer(options = {}) {
  const { Server, types } = loadSdk()
  const specs = selectSpecs(options)
  const byName = new Map(specs.map((s) => [s.name, s]))
  const server = new Server({ name: 'eddie-tools', version }, { capabilities: { tools: { listChanged: true } } })
  const fixedRoots = (options.roots ?? []).map((r) => resolve(r))
  let clientRoot = null
  // One permission session for the server's life: a moderate tool asks once, a dangerous one every time.
  const session = `mcp-${process.pid}-${Date.now()}`

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
  let rootsReady = null
  server.oninitialized = () => {
    rootsReady = refreshRoots()
  }
  server.setNotificationHandler(types.RootsListChangedNotificationSchema, async () => {
    rootsReady = refreshRoots()
    await rootsReady
  })

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
  /** What the operator approved on the command line (`--confirm allow`, `--allow-destructive`). */
  const preApproved =
    options.confirm === 'allow'
      ? { kinds: ['action', 'hooks', 'protected', ...(options.allowDestructive ? ['destructive'] : [])] }
      : undefined

  server.setRequestHandler(types.ListToolsRequestSchema, async () => {
    await rootsReady
    return { tools: workspace() ? specs.map(toMcpTool) : [] }
  })

  server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) => {
    const spec = byName.get(request.params.name)
    if (!spec) {
      return { isError: true, content: [{ type: 'text', text: `UNKNOWN_TOOL: no tool named \`${request.params.name}\` on this server` }] }
    }
    const progressToken = request.params._meta?.progressToken
    let progress = 0
    const onOutput =
      progressToken === undefined
        ? undefined
        : (chunk) => {
            progress += 1
            extra
              .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message: chunk.text.slice(-200) } })
              .catch(() => {})
          }
    await rootsReady
    const cwd = workspace()
    if (!cwd) {
      return {
        isError: true,
        content: [{ type: 'text', text: 'POLICY_DENIED: this server has no workspace: start it with --root DIR, or use a client that lists a file:// root. Nothing ran.' }],
      }
    }
    const ctx = { cwd, signal: extra.signal, onOutput, sessionId: session }
    if (options.maxPermission) ctx.maxPermission = options.maxPermission
    if (server.getClientCapabilities()?.elicitation) ctx.confirm = elicit
    if (preApproved) ctx.approved = preApproved
    if (options.sandbox !== undefined) ctx.sandbox = options.sandbox
    try {
      const result = await tools.runTool(spec.name, request.params.arguments ?? {}, ctx)
      const out = { content: [{ type: 'text', text: result.content }] }
      // The browser's screenshots carry MCP image content ({type: 'image', mimeType, data}).
      const image = result.data?.image
      if (image?.type === 'image' && typeof image.data === 'string') out.content.push({ type: 'image', mimeType: image.mimeType, data: image.data })
      if (result.data && typeof result.data === 'object' && !Array.isArray(result.data)) out.structuredContent = result.data
      return out
    } catch (e) {
      const code = typeof e?.code === 'string' ? e.code : 'INTERNAL'
      return { isError: true, content: [{ type: 'text', text: `${code}: ${e?.message ?? String(e)}` }] }
    }
  })
  return server
}

/** `eddie-tools mcp [--root DIR]... [--families a,b] [--max-permission LEVEL] [--confirm allow|deny] [--allow-destructive] [--sandbox MODE]` */
async function main(argv) {
  const options = { roots: [], confirm: 'deny' }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`)
      return argv[++i]
    }
    if (a === '--root') options.roots.push(value())
    else if (a === '--families') options.families = value().split(',').map((f) => f.trim()).filter(Boolean)
    else if (a === '--max-permission') options.maxPermission = value()
    else if (a === '--allow-destructive') options.allowDestructive = true
    else if (a === '--sandbox') {
      options.sandbox = value()
      if (!['workspace-write', 'read-only', 'off'].includes(options.sandbox)) throw new Error('--sandbox must be workspace-write, read-only or off')
    } else if (a === '--confirm') {
      options.confirm = value()
      if (!['allow', 'deny'].includes(options.confirm)) throw new Error('--confirm must be allow or deny')
    } else throw new Error(`unknown option ${a} (eddie-tools mcp [--root DIR]... [--families a,b] [--max-permission none|moderate|dangerous] [--confirm allow|deny] [--allow-destructive] [--sandbox workspace-write|read-only|off])`)
  }
  if (options.allowDestructive && options.confirm !== 'allow') throw new Error('--allow-destructive goes with --confirm allow')
  const server = createServer(options)
  const { types } = loadSdk()
  await server.connect(new EddieStdioTransport({ schema: types.JSONRPCMessageSchema }))
}

module.exports = { createServer, selectSpecs, toMcpTool, main }
