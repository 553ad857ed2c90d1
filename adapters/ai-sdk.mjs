// `@eddie/tools-native/ai-sdk` for ES modules.
import { tool, jsonSchema } from 'ai'
import core from './ai-sdk-core.js'

/** See ai-sdk-core.js: a ToolSet for `generateText` / `streamText`. */
export function toAiSdkTools(tools, session, options) {
  return core.makeAiSdkTools({ tool, jsonSchema }, tools, session, options)
}
export const aiSdkToolApproval = core.aiSdkToolApproval
