// `@eddie/tools-native/vscode`: the tools as VS Code language-model tools (`vscode.lm.registerTool`),
// and the `contributes.languageModelTools` block of an extension's package.json
// (`eddie-tools vscode-manifest` prints or writes it).
//
// VS Code approves before the call: `prepareInvocation` returns every prompt the call would ask
// (computed by `planConfirmation`, which changes nothing: the tool's own question, and a
// destructive command's finding, hooks that will run or a protected branch) as
// `confirmationMessages`, VS Code shows them, and `invoke` then runs with exactly those prompts
// approved. A prompt the call asks that was not shown (the workspace changed in between) goes to
// `options.confirm`; without one the call fails with `APPROVAL_REQUIRED` and nothing runs.
// @ts-check
'use strict'
const { selectTools, resolveTools, createSession, planConfirmation, settle, modelSchema } = require('./index.js')

/**
 * @typedef {import('./vscode.js').VsCodeApi} VsCodeApi
 * @typedef {import('./vscode.js').VsCodeToolsOptions} VsCodeToolsOptions
 * @typedef {import('./vscode.js').RegisterVsCodeToolsOptions} RegisterVsCodeToolsOptions
 * @typedef {import('./vscode.js').VsCodeCancellationToken} VsCodeCancellationToken
 * @typedef {import('./vscode.js').VsCodeManifestTool} VsCodeManifestTool
 * @typedef {import('./index.js').CallOptions} CallOptions
 * @typedef {import('./index.js').ConfirmationPrompt} ConfirmationPrompt
 */

const DEFAULT_PREFIX = 'eddie_'

/** @param {VsCodeToolsOptions} options */
function pickSpecs(options) {
  if (options.tools) return resolveTools(options.tools)
  return selectTools({ families: options.families, maxPermission: options.maxPermission, dedupe: options.dedupe ?? true })
}

/** @param {string} name */
function title(name) {
  return name.replace(/_+/g, ' ').replace(/^./, (c) => c.toUpperCase())
}

/**
 * The `contributes.languageModelTools` entries. Options: `tools` (names or specs), else `families`,
 * `maxPermission`, `dedupe` (default true); `prefix` (default 'eddie_': VS Code tool names are
 * global, shared by every extension).
 * @param {VsCodeToolsOptions} [options]
 * @returns {VsCodeManifestTool[]}
 */
function vsCodeManifest(options = {}) {
  const prefix = options.prefix ?? DEFAULT_PREFIX
  return pickSpecs(options).map((spec) => {
    return {
      name: `${prefix}${spec.name}`,
      displayName: title(spec.name),
      toolReferenceName: spec.name,
      canBeReferencedInPrompt: true,
      modelDescription: spec.description,
      userDescription: spec.description.split(/(?<=\.)\s/)[0],
      tags: ['eddie-tools', `eddie-tools-${spec.family}`],
      inputSchema: modelSchema(spec, { loose: true }),
    }
  })
}

/**
 * The workspace of a call: `options.cwd`, else the first workspace folder, else the process's.
 * @param {VsCodeApi} vscode
 * @param {RegisterVsCodeToolsOptions} options
 * @returns {string}
 */
function workspaceOf(vscode, options) {
  if (options.cwd) return typeof options.cwd === 'function' ? options.cwd() : options.cwd
  const folder = vscode.workspace?.workspaceFolders?.[0]
  return folder?.uri?.fsPath ?? process.cwd()
}

/**
 * An AbortSignal that follows a CancellationToken.
 * @param {VsCodeCancellationToken | undefined} token
 */
function signalOf(token) {
  if (!token) return undefined
  const controller = new AbortController()
  if (token.isCancellationRequested) controller.abort()
  else token.onCancellationRequested?.(() => controller.abort())
  return controller.signal
}

/**
 * Register the tools with `vscode.lm.registerTool` (their names must be in the extension's
 * `contributes.languageModelTools`: see `vsCodeManifest` / `eddie-tools vscode-manifest`, same
 * options). Disposables go to `context.subscriptions`; returns them too. Options as
 * `vsCodeManifest`, plus `cwd`, `env`, `ask`, `onOutput`, `confirm` (for confirms VS Code did not
 * show; default no).
 * @param {VsCodeApi} vscode
 * @param {{subscriptions: {dispose(): unknown}[]} | undefined} context
 * @param {RegisterVsCodeToolsOptions} [options]
 */
function registerVsCodeTools(vscode, context, options = {}) {
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const session = createSession({ cwd: workspaceOf(vscode, options), env: options.env, ask: options.ask, onOutput: options.onOutput })
  /** @type {Map<string, ConfirmationPrompt[]>} */
  const shown = new Map()
  const keyOf = (/** @type {string} */ name, /** @type {unknown} */ input) => `${name}\u0000${JSON.stringify(input ?? {})}`
  /** @type {{dispose(): unknown}[]} */
  const disposables = []
  for (const spec of pickSpecs(options)) {
    /** @type {import('./vscode.js').VsCodeLanguageModelTool<Record<string, unknown>>} */
    const tool = {
      async prepareInvocation(prepare) {
        session.cwd = workspaceOf(vscode, options)
        const plan = spec.confirms ? await planConfirmation(/** @type {any} */ (spec.name), prepare.input, session) : null
        /** @type {{invocationMessage: string, confirmationMessages?: {title: string, message: string}}} */
        const prepared = { invocationMessage: `${spec.name}` }
        if (plan) {
          shown.set(keyOf(spec.name, prepare.input), plan.prompts)
          // Bounded: a prepared call that is never invoked is dropped with the oldest.
          while (shown.size > 1000) shown.delete(/** @type {string} */ (shown.keys().next().value))
          prepared.confirmationMessages = { title: title(spec.name), message: plan.message }
        }
        return prepared
      },
      async invoke(invocation, token) {
        session.cwd = workspaceOf(vscode, options)
        const key = keyOf(spec.name, invocation.input)
        const approved = shown.get(key)
        shown.delete(key)
        /** @type {CallOptions} */
        const call = { signal: signalOf(token), approved }
        if (options.confirm) call.confirm = options.confirm
        const settled = await settle(session, spec.name, invocation.input ?? {}, call)
        if (!settled.ok) throw new Error(settled.text)
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(settled.text)])
      },
    }
    const disposable = vscode.lm.registerTool(`${prefix}${spec.name}`, tool)
    disposables.push(disposable)
    context?.subscriptions?.push(disposable)
  }
  return disposables
}

module.exports = { registerVsCodeTools, vsCodeManifest, DEFAULT_PREFIX }
