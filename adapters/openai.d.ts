import type { Session, SessionOptions, ToolsInput } from './index.js'

export interface JsonSchemaObject { [key: string]: unknown }
export interface OpenAIFunctionDef { name: string; description: string; parameters: JsonSchemaObject; strict: boolean }
/** Chat Completions: `tools` of `client.chat.completions.create`. */
export interface OpenAIChatTool { type: 'function'; function: OpenAIFunctionDef }
/** Responses: `tools` of `client.responses.create`. */
export interface OpenAIResponsesTool extends OpenAIFunctionDef { type: 'function' }

export interface OpenAIToolsOptions<A extends 'chat' | 'responses' = 'chat' | 'responses'> {
  api?: A
  /** Strict-mode schemas (default true). */
  strict?: boolean
}
/** `tools`: a list, a profile name, or nothing for the `core` profile. */
export declare function toOpenAITools(tools?: ToolsInput, options?: OpenAIToolsOptions<'chat'>): OpenAIChatTool[]
export declare function toOpenAITools(tools: ToolsInput, options: OpenAIToolsOptions<'responses'> & { api: 'responses' }): OpenAIResponsesTool[]

/** A chat tool call (`message.tool_calls[i]`). */
export interface OpenAIChatToolCall { id: string; type?: 'function' | (string & {}); function: { name: string; arguments: string } }
/** A chat custom tool call (skipped: our tools are functions). */
export interface OpenAIChatCustomToolCall { id: string; type: 'custom'; custom: unknown }
/** A Responses `function_call` output item. */
export interface OpenAIResponsesFunctionCall { type?: 'function_call' | (string & {}); call_id: string; name: string; arguments: string; id?: string }

export interface OpenAIChatToolMessage { role: 'tool'; tool_call_id: string; content: string }
export interface OpenAIFunctionCallOutput { type: 'function_call_output'; call_id: string; output: string }

export interface RunOptions { signal?: AbortSignal }
/** A chat turn's `message.tool_calls` (custom tool calls are skipped), or a Responses `output`. */
export declare function runOpenAIToolCalls(calls: readonly (OpenAIChatToolCall | OpenAIChatCustomToolCall)[] | null | undefined, session: Session | SessionOptions, options?: RunOptions): Promise<OpenAIChatToolMessage[]>
export declare function runOpenAIToolCalls(calls: readonly (OpenAIResponsesFunctionCall | { type: string })[], session: Session | SessionOptions, options?: RunOptions): Promise<OpenAIFunctionCallOutput[]>

export declare function toStrictSchema(jsonSchema: JsonSchemaObject): JsonSchemaObject
export declare function toLooseSchema(jsonSchema: JsonSchemaObject): JsonSchemaObject
export declare function decodeArgs(value: unknown, schema: JsonSchemaObject): unknown
export declare const STRICT_KEYWORDS: ReadonlySet<string>
/** A property description that marks another agent's spelling of an argument (left out of strict schemas). */
export declare const SEED_PROPERTY: RegExp

/** A tool for `client.chat.completions.runTools` (structurally the SDK's RunnableToolFunctionWithParse). */
export interface OpenAIRunnableTool {
  type: 'function'
  function: OpenAIFunctionDef & { parse(raw: string): Record<string, unknown>; function(args: Record<string, unknown>): Promise<string> }
}
export declare function toOpenAIRunnableTools(tools: ToolsInput, session: Session | SessionOptions, options?: { strict?: boolean; signal?: AbortSignal }): OpenAIRunnableTool[]
