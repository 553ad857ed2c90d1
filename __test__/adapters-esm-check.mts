// Compiled with `tsc --noEmit` only: the adapters' typings from an ES module, through the package's own exports map.
import { toAiSdkTools } from '@eddie/tools-native/ai-sdk'
import { toOpenAITools } from '@eddie/tools-native/openai'
import { createSession, type ToolName } from '@eddie/tools-native/adapters'
import { registerVsCodeTools } from '@eddie/tools-native/vscode'
const s = createSession({ cwd: '.' })
const n: ToolName = 'grep'
export const x = [toAiSdkTools([n], s), toOpenAITools(), registerVsCodeTools]
