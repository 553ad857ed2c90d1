// `@eddie/tools-native/ai-sdk` for CommonJS. The `ai` package (v7) is ESM-only; `require` of it works
// on Node >= 20.19 / 22.12 (require of ES modules). ESM code gets `ai-sdk.mjs`.
// @ts-check
'use strict'
const { makeAiSdkTools, aiSdkToolApproval } = require('./ai-sdk-core.js')

/** @type {any} the `ai` module, once loaded */
let ai = null
/** The `ai` module (an optional peer dependency). */
function loadAi() {
  if (!ai) {
    try {
      ai = require('ai')
    } catch (cause) {
      const error = /** @type {Error & {code?: string}} */ (new Error(
        '@eddie/tools-native/ai-sdk needs the `ai` package (an optional peer dependency): `npm install ai`. ' +
          'From CommonJS on Node older than 20.19, import it from ESM instead.',
        { cause },
      ))
      error.code = 'AI_SDK_MISSING'
      throw error
    }
  }
  return ai
}

/**
 * See ai-sdk-core.js: a ToolSet for `generateText` / `streamText`.
 * @param {readonly import('./index.js').ToolRef[] | null | undefined} tools
 * @param {import('./index.js').Session | import('./index.js').SessionOptions} session
 * @param {import('./ai-sdk.js').AiSdkToolsOptions} [options]
 */
function toAiSdkTools(tools, session, options) {
  return makeAiSdkTools(loadAi(), tools, session, options)
}

module.exports = { toAiSdkTools, aiSdkToolApproval }
