import type { DynamicStructuredTool } from '@langchain/core/tools'
import type { Session, SessionOptions, ToolsInput } from './index.js'

/** One DynamicStructuredTool per tool (`responseFormat: 'content_and_artifact'`: content = text, artifact = data). */
export declare function toLangChainTools(tools: ToolsInput, session: Session | SessionOptions): DynamicStructuredTool[]
