import type { DynamicStructuredTool } from '@langchain/core/tools'
import type { Session, SessionOptions, ToolRef } from './index.js'

/** One DynamicStructuredTool per tool (`responseFormat: 'content_and_artifact'`: content = text, artifact = data). */
export declare function toLangChainTools(tools: readonly ToolRef[] | null | undefined, session: Session | SessionOptions): DynamicStructuredTool[]
