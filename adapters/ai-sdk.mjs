// `@eddie/tools-native/ai-sdk` for ES modules.
// @ts-check
import { tool, jsonSchema } from 'ai'
import core from './ai-sdk-core.js'

/**
 * See ai-sdk-core.js: a ToolSet for `generateText` / `streamText`.
 * @param {readonly import('./index.js').ToolRef[] | null | undefined} tools
 * @param {import('./index.js').Session | import('./index.js').SessionOptions} session
 * @param {import('./ai-sdk.js').AiSdkToolsOptions} [options]
 */
export function toAiSdkTools(tools, session, options) {
  return core.makeAiSdkTools({ tool, jsonSchema }, tools, session, options)
}
export const aiSdkToolApproval = core.aiSdkToolApproval
