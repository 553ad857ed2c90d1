// Types of `@eddie/tools-native/mcp` (mcp/server.js): the tools of this package as an MCP server
// with no dependency (its own JSON-RPC peer and stdio transport). Hand-written.
import type { NativeToolSpec, SandboxMode } from '../index.js'
import type { Permission, ProfileName, ToolFamily, ToolName, ToolAlias } from '../adapters/index.js'

/** What `createServer` takes (the `eddie-tools mcp` options). */
export interface ServerOptions {
  /** The workspace (`--root`): the first one is used. Without it, the client's first `file://` root. */
  roots?: string[]
  /** A named set of tools (`--profile`); default `core` when neither `tools` nor `families` is given. */
  profile?: ProfileName
  /** Exactly these tools (`--tools`). */
  tools?: (ToolName | ToolAlias)[]
  /** Only these families' tools (`--families`). */
  families?: (ToolFamily | (string & {}))[]
  /** Only tools up to this level are listed and callable (`--max-permission`). */
  maxPermission?: Permission
  /** List each tool's output schema too (`--output-schemas`; off by default: a client compiles each one). */
  outputSchemas?: boolean
  /** Without elicitation: `allow` approves each tool's own question, hooks and protected branches; `deny` (default) refuses with APPROVAL_REQUIRED. */
  confirm?: 'allow' | 'deny'
  /** With `confirm: 'allow'`, destructive commands too (`--allow-destructive`). */
  allowDestructive?: boolean
  /** The sandbox every command runs in (`--sandbox`); required when given (SANDBOX_UNAVAILABLE where it cannot be). */
  sandbox?: SandboxMode
}

/** MCP tool annotations (hints a client may show or act on). */
export interface McpToolAnnotations {
  title?: string
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}
/** One entry of tools/list. */
export interface McpTool {
  name: string
  description?: string
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown }
  outputSchema?: { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown }
  annotations?: McpToolAnnotations
}
/** The result of tools/call. */
export interface CallToolResult {
  content: ({ type: 'text'; text: string } | { type: 'image'; mimeType: string; data: string })[]
  structuredContent?: Record<string, unknown>
  isError?: boolean
}

/** A JSON-RPC transport (`start`, `send`, `close`, and the callbacks the server sets). */
export interface McpTransport {
  start(): Promise<void>
  send(message: unknown): Promise<void>
  close(): Promise<void>
  onmessage?: ((message: any) => void) | undefined
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
}

/** A server built by `createServer`. */
export interface EddieMcpServer {
  /** What tools/list gives (when there is a workspace). */
  readonly tools: McpTool[]
  /** Serve over `transport` (the stdio one: `new EddieStdioTransport(...)` from `mcp/transport.js`). */
  connect(transport: McpTransport): Promise<void>
  close(): Promise<void>
}

/** Build (without connecting) a server over `options`. */
export declare function createServer(options?: ServerOptions): EddieMcpServer
/** The tools a server with these options lists (the adapters' `selectTools`). */
export declare function selectSpecs(options?: Pick<ServerOptions, 'families' | 'maxPermission' | 'profile' | 'tools'>): NativeToolSpec[]
/** The tools/list entry of a spec: its input schema (loose at the root), annotations, and with `outputSchema: true` its output schema. */
export declare function toMcpTool(spec: NativeToolSpec, options?: { outputSchema?: boolean }): McpTool
/** The annotations of a spec (derived from its effects, permission and family). */
export declare function annotationsOf(spec: NativeToolSpec): Required<McpToolAnnotations>
/** `eddie-tools mcp [options]`: serve on stdio until stdin ends. Throws on a bad option before serving. */
export declare function main(argv: string[]): Promise<void>
/** The usage line of `eddie-tools mcp`. */
export declare const MCP_USAGE: string
