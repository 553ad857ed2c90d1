// Types of `@eddie/tools-native/mcp` (mcp/server.js): every tool of this package as an MCP
// server, built with the official MCP SDK (an optional peer dependency). Hand-written.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type { NativeToolSpec, SandboxMode } from '../index.js'
import type { Permission, ToolFamily } from '../adapters/index.js'

/** What `createServer` takes (the `eddie-tools mcp` options). */
export interface ServerOptions {
  /** The workspace (`--root`): the first one is used. Without it, the client's first `file://` root. */
  roots?: string[]
  /** Only these families' tools (`--families`). */
  families?: (ToolFamily | (string & {}))[]
  /** Only tools up to this level are listed and callable (`--max-permission`). */
  maxPermission?: Permission
  /** Without elicitation: `allow` approves each tool's own question, hooks and protected branches; `deny` (default) refuses with APPROVAL_REQUIRED. */
  confirm?: 'allow' | 'deny'
  /** With `confirm: 'allow'`, destructive commands too (`--allow-destructive`). */
  allowDestructive?: boolean
  /** The sandbox every command runs in (`--sandbox`); required when given (SANDBOX_UNAVAILABLE where it cannot be). */
  sandbox?: SandboxMode
}

/** One entry of tools/list. */
export type McpTool = Tool

/** Build (without connecting) a server over `options`. Throws MCP_SDK_MISSING without the SDK. */
export declare function createServer(options?: ServerOptions): Server
/** The tools a server with these options lists (the adapters' `selectTools`). */
export declare function selectSpecs(options?: Pick<ServerOptions, 'families' | 'maxPermission'>): NativeToolSpec[]
/** The tools/list entry of a spec: its schemas (the input schema loose at the root) and annotations. */
export declare function toMcpTool(spec: NativeToolSpec): McpTool
/** `eddie-tools mcp [options]`: serve on stdio until stdin ends. */
export declare function main(argv: string[]): Promise<void>
