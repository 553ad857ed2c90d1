import type { Tool, ToolApprovalConfiguration } from 'ai'
import type { Session, SessionOptions, ToolsInput, ToolName, ToolArgsMap, ToolDataMap } from './index.js'
import type { ToolResult } from '../index.js'

/** The AI SDK tool of one of our tools: input = its args, output = the whole result (code keeps `data`). */
export type EddieAiSdkTool<N extends ToolName = ToolName> = Tool<ToolArgsMap[N], ToolResult<ToolDataMap[N]>>
export type EddieToolSet = { [N in ToolName]?: EddieAiSdkTool<N> } & Record<string, Tool<any, any>>

export interface AiSdkToolsOptions {
  /** 'confirm' (default): ask session.confirm during the call. 'sdk': the SDK approves first (needsApproval). */
  approval?: 'confirm' | 'sdk'
}
/** `tools`: a list, a profile name, or null/undefined for the `core` profile. */
export declare function toAiSdkTools(tools: ToolsInput, session: Session | SessionOptions, options?: AiSdkToolsOptions): EddieToolSet
/** A `toolApproval` for generateText/streamText: tools that confirm need approval, with our confirmation text as the reason. */
export declare function aiSdkToolApproval(session: Session | SessionOptions): ToolApprovalConfiguration<any, any>
