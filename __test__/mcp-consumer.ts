// Typecheck only (npm run typecheck): `@eddie/tools-native/mcp` is typed through its `exports` entry.
import { createServer, selectSpecs, toMcpTool, main, type ServerOptions } from '@eddie/tools-native/mcp'

const options: ServerOptions = { roots: ['.'], families: ['code'], maxPermission: 'moderate', confirm: 'allow', sandbox: 'read-only' }
const server = createServer(options)
void server.connect
const names: string[] = selectSpecs(options).map((s) => s.name)
const listed = toMcpTool(selectSpecs()[0]!)
const title: string | undefined = listed.annotations?.title
const started: Promise<void> = main(['--root', '.'])
const lean = createServer({ profile: 'review', outputSchemas: true })
const exact = createServer({ tools: ['grep', 'read'] })
const tools: string[] = [...lean.tools, ...exact.tools].map((t) => t.name)
// @ts-expect-error: not a profile
createServer({ profile: 'everything' })
// @ts-expect-error: not a tool
createServer({ tools: ['grepp'] })
// @ts-expect-error: confirm is 'allow' or 'deny'
createServer({ confirm: 'yes' })
// @ts-expect-error: the levels are none, moderate and dangerous
createServer({ maxPermission: 'all' })
void names
void title
void started
void tools
