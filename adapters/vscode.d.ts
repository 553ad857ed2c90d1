import type { Session, SessionOptions, ToolRef, ToolFamily, Permission, ProfileName } from './index.js'

/** The part of the `vscode` module this adapter uses (pass the real `vscode` namespace). */
export interface VsCodeApi {
  lm: { registerTool<T>(name: string, tool: VsCodeLanguageModelTool<T>): { dispose(): unknown } }
  workspace?: { workspaceFolders?: readonly { uri: { fsPath: string } }[] | undefined }
  LanguageModelToolResult: new (content: any[]) => any
  LanguageModelTextPart: new (value: string) => any
}
export interface VsCodeCancellationToken { isCancellationRequested: boolean; onCancellationRequested: (listener: () => unknown) => unknown }
export interface VsCodeLanguageModelTool<T> {
  invoke(options: { input: T }, token: VsCodeCancellationToken): any
  prepareInvocation?(options: { input: T }, token: VsCodeCancellationToken): any
}

export interface VsCodeToolsOptions {
  /** A list, or a profile name; without it, `families`/`maxPermission`/`dedupe` choose (default: every tool, deduplicated). */
  tools?: readonly ToolRef[] | ProfileName
  families?: ToolFamily[]
  maxPermission?: Permission
  /** Default true. */
  dedupe?: boolean | 'eddie'
  /** Tool-name prefix (default 'eddie_'); must match the manifest's. */
  prefix?: string
}
export interface RegisterVsCodeToolsOptions extends VsCodeToolsOptions {
  /** The workspace (default: the first workspace folder, read at each call). */
  cwd?: string | (() => string)
  env?: SessionOptions['env']
  ask?: SessionOptions['ask']
  onOutput?: SessionOptions['onOutput']
  /** Confirms VS Code did not show (default: declined). */
  confirm?: SessionOptions['confirm']
}
export interface VsCodeManifestTool {
  name: string
  displayName: string
  toolReferenceName: string
  canBeReferencedInPrompt: boolean
  modelDescription: string
  userDescription: string
  tags: string[]
  inputSchema: { type: 'object'; [key: string]: unknown }
}

export declare function registerVsCodeTools(vscode: VsCodeApi, context: { subscriptions: { dispose(): unknown }[] } | undefined, options?: RegisterVsCodeToolsOptions): { dispose(): unknown }[]
export declare function vsCodeManifest(options?: VsCodeToolsOptions): VsCodeManifestTool[]
export declare const DEFAULT_PREFIX: string
