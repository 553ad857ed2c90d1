// Shared helpers of the framework adapters. Hand-written; the tool maps come from tools.d.ts
// (generated from toolSpecs() by adapters/gen-types.mjs).
import type { NativeToolSpec, ToolContext, ToolResult, OutputChunk, ToolDefinition, ErrorCode } from '../index.js'
import type { ToolName, ToolAlias, ToolFamily, ToolArgsMap, ToolDataMap } from './tools.js'

export type { ToolName, ToolAlias, ToolFamily, ToolArgsMap, ToolDataMap }
export type Permission = 'none' | 'moderate' | 'dangerous'

/** A spec whose name is a known tool. */
export type ToolSpecOf<N extends ToolName = ToolName> = NativeToolSpec & { name: N }
/**
 * One entry of an adapter's tool list: a model name, another agent's name (`read`,
 * `execute_command`), a spec, or a ToolDefinition. A misspelt name does not compile; for a name
 * known only at run time, look its spec up with `specByName(name)` (it throws UNKNOWN_TOOL).
 */
export type ToolRef = ToolName | ToolAlias | NativeToolSpec | ToolDefinition<any, any>
/** The named tool sets: `core` (the default), `coding`, `review`, `research`, `browsing`, `all`. */
export type ProfileName = 'core' | 'coding' | 'review' | 'research' | 'browsing' | 'all'
/** What an adapter takes as its tools: a list, a profile name, or nothing (the `core` profile). */
export type ToolsInput = readonly ToolRef[] | ProfileName | null | undefined
/** Each profile's tools (model names); `all` is every tool with `dedupe: true`. */
export declare const PROFILES: Readonly<Record<Exclude<ProfileName, 'all'>, readonly ToolName[]>>
export declare const PROFILE_NAMES: readonly ProfileName[]
/** The profile every adapter and the MCP server use when given no tools: `'core'`. */
export declare const DEFAULT_PROFILE: 'core'
/** The model names of a profile. */
export declare function profileTools(name: ProfileName): ToolName[]

/** `[kept, dropped]` pairs of overlapping tools (`dedupe: true` drops the second). */
export declare const OVERLAPS: ReadonlyArray<readonly [ToolName, ToolName]>
export declare const PERMISSIONS: readonly Permission[]

export interface SessionOptions {
  /** The workspace root (default: process.cwd()). */
  cwd?: string
  /** Asked each prompt a call needs that no approval covers. Missing: such a call fails with APPROVAL_REQUIRED and nothing runs. */
  confirm?: (message: string) => boolean | Promise<boolean>
  /** The host's ceiling: a tool above this level is refused with POLICY_DENIED, no one asked. */
  maxPermission?: Permission
  /** The sandbox every command of the session's calls runs in (see ToolContext.sandbox). */
  sandbox?: ToolContext['sandbox']
  /** How ask_user / ask_followup_question reach the user. */
  ask?: (question: string) => string | Promise<string>
  env?: Record<string, string | undefined>
  onOutput?: (chunk: OutputChunk) => void
  /** The permission session's id (default: a fresh random one). */
  sessionId?: string
  /** What the model reads: 'text' (default: the result's text, or `CODE: message`), or a seed's envelope as JSON ('stack': `{success, result | error}`, 'floyd': `{success, data | error: {code, message, details}}`). */
  resultShape?: ResultShape
}

/** What the model reads of a call (see `toResultShape`). */
export type ResultShape = 'text' | 'stack' | 'floyd'
export declare const RESULT_SHAPES: readonly ResultShape[]

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal
  /**
   * What the host approved before the call: a plan from `planConfirmation` (or its prompts) covers
   * exactly those prompts; `true` covers only the tool's own question. Anything else still goes to `confirm`.
   */
  approved?: ToolContext['approved'] | ConfirmationPlan | ConfirmationPrompt[]
  /** Replaces the session's confirm for this call. */
  confirm?: (message: string) => boolean | Promise<boolean>
  onOutput?: (chunk: OutputChunk) => void
  /** The result's `data` as JSON text (`dataJson`), for hosts that only pass it on (see `ToolContext.dataAsJson`). */
  dataAsJson?: boolean
}

/** One permission session: every call shares its `sessionId`, each call has its own ctx. */
export interface Session {
  readonly sessionId: string
  cwd: string
  readonly resultShape?: ResultShape
  env?: Record<string, string | undefined>
  /** The sandbox every command of the session's calls runs in. */
  sandbox?: ToolContext['sandbox']
  ctx(call?: CallOptions): ToolContext
  /** Run one tool: its name and arguments are checked at compile time. */
  run<N extends ToolName>(name: N, args: ToolArgsMap[N], call?: CallOptions): Promise<ToolResult<ToolDataMap[N]>>
  /** The escape hatch for a name known only at run time (a model's call): the core checks name and arguments. */
  runDynamic(name: string, args: unknown, call?: CallOptions): Promise<ToolResult>
  /** End the session: the tools it allowed ask again. Returns whether it had any grants. */
  end(): boolean
}

/** One prompt a call would ask. */
export interface ConfirmationPrompt {
  kind: 'action' | 'destructive' | 'hooks' | 'protected'
  text: string
}
/** Every prompt a call would ask, and their texts joined for a dialog. */
export interface ConfirmationPlan {
  prompts: ConfirmationPrompt[]
  message: string
}

export declare function createSession(options?: SessionOptions | Session): Session

export interface SelectOptions {
  /** Only this profile's tools. */
  profile?: ProfileName
  families?: ToolFamily[]
  maxPermission?: Permission
  /** Only these tools. */
  names?: ToolRef[]
  /** true (default): keep the richer tool of each overlapping pair (read_file over file_read, run over bash, ...); 'eddie': keep eddie's; false: both. */
  dedupe?: boolean | 'eddie'
}
export declare function selectTools(options?: SelectOptions): NativeToolSpec[]
export declare function resolveTools(tools?: ToolsInput): NativeToolSpec[]
export declare function allSpecs(): NativeToolSpec[]
/** The spec of a tool by its model name, JS name or another agent's name; otherwise throws the core's UNKNOWN_TOOL (the closest names in its message and `suggestions`). */
export declare function specByName(name: string): NativeToolSpec
/** The name a call of `name` goes through as: another agent's name as given (it may imply arguments), else the model name. Throws UNKNOWN_TOOL like specByName. */
export declare function calledName(name: string): string

/** The input schema a model sees (type object; `loose`: no root additionalProperties). */
export declare function modelSchema(spec: NativeToolSpec, options?: { loose?: boolean }): { type: 'object'; [key: string]: unknown }

export declare function errorInfo(error: unknown): { code: ErrorCode | (string & {}); message: string }
/** A result's `content`, or `CODE: message` for an error. */
export declare function toModelText(resultOrError: ToolResult | unknown): string

/** Stack 2.9's result envelope. */
export type StackEnvelope<D = unknown> = { success: true; result: { content: string } & D } | { success: false; error: string }
/** Floyd's result envelope. */
export type FloydEnvelope<D = unknown> =
  | { success: true; data: { content: string } & D }
  | { success: false; error: { code: ErrorCode | (string & {}); message: string; details?: Record<string, unknown> } }
/** A result or error in a seed's envelope (`data` with the text as `content`). */
export declare function toResultShape(shape: 'stack', resultOrError: ToolResult | unknown): StackEnvelope
export declare function toResultShape(shape: 'floyd', resultOrError: ToolResult | unknown): FloydEnvelope
export declare function toResultShape(shape: 'text', resultOrError: ToolResult | unknown): { success: boolean; text?: string; error?: string }
export declare function toResultShape(shape: ResultShape, resultOrError: ToolResult | unknown): StackEnvelope | FloydEnvelope | { success: boolean; text?: string; error?: string }
/** Stack 2.9's `get_tool_schemas()`: `{name, description, parameters}` of every tool (or of `tools`). */
export declare function getToolSchemas(tools?: ToolsInput): Array<{ name: ToolName; description: string; parameters: { type: 'object'; [key: string]: unknown } }>
/** Stack 2.9's `get_tool(name)`: runs the tool in `session` and resolves to Stack's envelope (never rejects). */
export declare function getTool(name: ToolName | ToolAlias, session?: Session | SessionOptions): (args?: Record<string, unknown>) => Promise<StackEnvelope>

export type Settled<D = unknown> =
  | { ok: true; result: ToolResult<D>; text: string }
  | { ok: false; error: unknown; text: string }
/** Run a call a model made (its name known only at run time) and never throw: the text the model reads either way. */
export declare function settle(session: Session, name: string, args: unknown, call?: CallOptions): Promise<Settled>

/** Whether a call of the tool would ask now, by its level alone (false: level none, or a moderate tool the session granted). */
export declare function wouldAsk(name: ToolName | ToolAlias, session?: Session | SessionOptions): Promise<boolean>

/** Every prompt the call would ask, computed without changing anything; null when it would not ask (or fails before asking). */
export declare function planConfirmation<N extends ToolName>(name: N, args: ToolArgsMap[N], session?: Session | SessionOptions): Promise<ConfirmationPlan | null>

/** The text of every prompt the call would ask (`planConfirmation(...).message`); null when it would not ask. */
export declare function describeConfirmation<N extends ToolName>(name: N, args: ToolArgsMap[N], session?: Session | SessionOptions): Promise<string | null>

export declare function dropNulls<T>(value: T): T

/** `runTool`, typed by tool name. */
export declare function runTool<N extends ToolName>(name: N, args: ToolArgsMap[N], ctx: ToolContext): Promise<ToolResult<ToolDataMap[N]>>
export declare function toolSpecs(): NativeToolSpec[]
