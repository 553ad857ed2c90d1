import type { Session, SessionOptions, ToolsInput } from './index.js'

export interface AnthropicTool { name: string; description: string; input_schema: { type: 'object'; [key: string]: unknown } }
export interface AnthropicToolUseBlock { type: 'tool_use'; id: string; name: string; input: unknown }
export interface AnthropicToolResultBlock { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }

/** `tools`: a list, a profile name, or nothing for the `core` profile. */
export declare function toAnthropicTools(tools?: ToolsInput): AnthropicTool[]
/** Runs the `tool_use` blocks (of `message.content`, or of the message) and returns their `tool_result` blocks. */
export declare function runAnthropicToolUses(
  blocks: readonly ({ type: string } | AnthropicToolUseBlock)[] | { content: readonly ({ type: string } | AnthropicToolUseBlock)[] },
  session: Session | SessionOptions,
  options?: { signal?: AbortSignal },
): Promise<AnthropicToolResultBlock[]>

/** A tool for `client.beta.messages.toolRunner` (structurally the SDK's BetaRunnableTool). */
export interface AnthropicRunnableTool extends AnthropicTool {
  type: 'custom'
  parse(content: unknown): Record<string, unknown>
  run(input: Record<string, unknown>, context?: { signal?: AbortSignal | null }): Promise<string>
}
export declare function toAnthropicRunnableTools(
  tools: ToolsInput,
  session: Session | SessionOptions,
  /** ToolError: the SDK's class to throw errors as (default: the copy the caller loaded). */
  options?: { ToolError?: new (content: string) => Error },
): AnthropicRunnableTool[]
