import assert from 'node:assert/strict'
import { chmodSync, mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'

const made = []
process.on('exit', () => {
  for (const dir of made) removeTree(dir)
})

/** Remove `dir`, first giving back the permissions a test took away (a folder made unreadable). */
function removeTree(dir) {
  try {
    rmSync(dir, { recursive: true, force: true })
  } catch {
    const open = (p) => {
      try { chmodSync(p, 0o700) } catch {}
      let entries = []
      try { entries = readdirSync(p, { withFileTypes: true }) } catch {}
      for (const e of entries) if (e.isDirectory()) open(join(p, e.name))
    }
    open(dir)
    try { rmSync(dir, { recursive: true, force: true }) } catch {}
  }
}

/** A fresh folder under the system's temporary one (real path), removed when the test process exits. */
export function tempDir(prefix = 'eddie-native-') {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  made.push(dir)
  return dir
}

/** A fresh workspace with `files` ({relative path: content}), removed when the test process exits. */
export function workspace(files = {}) {
  const dir = tempDir('eddie-native-')
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true })
    writeFileSync(join(dir, rel), content)
  }
  return dir
}

/** A ctx whose confirm answers `answer` and records every prompt. */
export function context(cwd, answer = true, extra = {}) {
  const prompts = []
  return {
    prompts,
    ctx: { cwd, confirm: async (message) => { prompts.push(message); return answer }, ...extra },
  }
}

/** Assert that `promise` rejects with an Error carrying `code` (and optionally a message). */
export async function rejectsWith(assert, promise, code, message) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof Error, 'is an Error')
    assert.equal(typeof err.code, 'string')
    assert.equal(err.code, code, `code of: ${err.message}`)
    if (message instanceof RegExp) assert.match(err.message, message)
    else if (message !== undefined) assert.equal(err.message, message)
    return true
  })
}

// ---- JSON Schema: the one validator every test uses (tool results against outputSchema,
// arguments against jsonSchema), so that results and schemas cannot drift apart.

/** Keywords that only annotate: they never reject a value. */
const ANNOTATIONS = new Set(['$id', '$schema', '$comment', 'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly'])
/** Keywords `schemaErrors` checks; any other keyword is reported, so a schema cannot quietly outgrow it. */
const KEYWORDS = new Set([
  'type', 'enum', 'const', '$ref', 'anyOf', 'oneOf', 'allOf',
  'properties', 'required', 'additionalProperties', 'items', 'minItems', 'maxItems',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern',
])
/** Every keyword a schema may use with `schemaErrors` (checked ones and annotations). */
export const SCHEMA_KEYWORDS = new Set([...KEYWORDS, ...ANNOTATIONS])

/** The JSON type of a value, as `type` names it (`integer` for whole numbers). */
function jsonType(v) {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

/** The schema a local `$ref` (`#/a/b`, a JSON Pointer into `root`) points to. */
function resolveRef(ref, root) {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref} (only local JSON Pointers)`)
  let node = root
  for (const part of ref.slice(2).split('/').map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))) {
    if (node === null || typeof node !== 'object' || !(part in node)) throw new Error(`$ref ${ref} points nowhere`)
    node = node[part]
  }
  return node
}

/**
 * Where `value` breaks `schema`: a list of `path: problem` strings, empty when it conforms.
 * Supports the JSON Schema subset our tool schemas use: `type` (a name or a list, so `["string",
 * "null"]` is nullable; `integer` is a whole `number`), `enum`, `const`, local `$ref`, `anyOf`,
 * `oneOf`, `allOf`, `properties`, `required`, `additionalProperties` (boolean or schema), `items`,
 * `minItems`/`maxItems`, `minimum`/`maximum` (and exclusive), `minLength`/`maxLength` (in code
 * points), `pattern`; annotations (`$id`, `description`, `default`...) are ignored, and any other
 * keyword is itself reported as an error.
 */
export function schemaErrors(schema, value, at = '$', root = schema) {
  if (schema === true) return []
  if (schema === false) return [`${at}: no value is allowed here`]
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [`${at}: not a schema: ${JSON.stringify(schema)}`]
  const errs = []
  for (const k of Object.keys(schema)) if (!KEYWORDS.has(k) && !ANNOTATIONS.has(k)) errs.push(`${at}: unsupported schema keyword ${k}`)
  const show = (v) => JSON.stringify(v)
  const t = jsonType(value)
  if (schema.$ref !== undefined) errs.push(...schemaErrors(resolveRef(schema.$ref, root), value, at, root))
  if (schema.type !== undefined) {
    const types = [schema.type].flat()
    if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) return [...errs, `${at}: ${show(value)} is ${t}, not ${types.join(' or ')}`]
  }
  if (schema.enum && !schema.enum.some((e) => isDeepStrictEqual(e, value))) errs.push(`${at}: ${show(value)} is not one of ${show(schema.enum)}`)
  if ('const' in schema && !isDeepStrictEqual(schema.const, value)) errs.push(`${at}: ${show(value)} is not ${show(schema.const)}`)
  if (schema.anyOf && !schema.anyOf.some((s) => schemaErrors(s, value, at, root).length === 0)) {
    errs.push(`${at}: matches no anyOf branch (${schema.anyOf.map((s) => schemaErrors(s, value, at, root).join('; ')).join(' | ')})`)
  }
  if (schema.oneOf) {
    const n = schema.oneOf.filter((s) => schemaErrors(s, value, at, root).length === 0).length
    if (n !== 1) errs.push(`${at}: matches ${n} oneOf branches, not exactly 1`)
  }
  for (const s of schema.allOf ?? []) errs.push(...schemaErrors(s, value, at, root))
  if (t === 'object') {
    for (const k of schema.required ?? []) if (!Object.hasOwn(value, k)) errs.push(`${at}.${k}: missing (required)`)
    const props = schema.properties ?? {}
    for (const [k, v] of Object.entries(value)) {
      if (Object.hasOwn(props, k)) errs.push(...schemaErrors(props[k], v, `${at}.${k}`, root))
      else if (schema.additionalProperties === false) errs.push(`${at}.${k}: not in the schema (additionalProperties: false)`)
      else if (schema.additionalProperties !== undefined) errs.push(...schemaErrors(schema.additionalProperties, v, `${at}.${k}`, root))
    }
  }
  if (t === 'array') {
    if (schema.items !== undefined) value.forEach((v, i) => errs.push(...schemaErrors(schema.items, v, `${at}[${i}]`, root)))
    if (schema.minItems !== undefined && value.length < schema.minItems) errs.push(`${at}: ${value.length} items, fewer than ${schema.minItems}`)
    if (schema.maxItems !== undefined && value.length > schema.maxItems) errs.push(`${at}: ${value.length} items, more than ${schema.maxItems}`)
  }
  if (t === 'integer' || t === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errs.push(`${at}: ${value} < minimum ${schema.minimum}`)
    if (schema.maximum !== undefined && value > schema.maximum) errs.push(`${at}: ${value} > maximum ${schema.maximum}`)
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) errs.push(`${at}: ${value} <= exclusiveMinimum ${schema.exclusiveMinimum}`)
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) errs.push(`${at}: ${value} >= exclusiveMaximum ${schema.exclusiveMaximum}`)
  }
  if (t === 'string') {
    const len = [...value].length
    if (schema.minLength !== undefined && len < schema.minLength) errs.push(`${at}: ${len} characters, fewer than ${schema.minLength}`)
    if (schema.maxLength !== undefined && len > schema.maxLength) errs.push(`${at}: ${len} characters, more than ${schema.maxLength}`)
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) errs.push(`${at}: ${show(value)} does not match /${schema.pattern}/`)
  }
  return errs
}

/** Assert that `value` conforms to `schema` (see `schemaErrors`); `at` names it in messages. */
export function assertMatchesSchema(schema, value, at = '$') {
  assert.deepEqual(schemaErrors(schema, value, at), [], `${at} does not match its schema`)
}

/**
 * The tools with `confirm: () => true` added to every ctx that has none: for suites about what a
 * tool does once allowed, not about the permission gate (which has its own tests). A `moderate`
 * or `dangerous` tool called without a confirm fails with APPROVAL_REQUIRED.
 */
export function approving(tools) {
  const yes = () => true
  const withConfirm = (ctx) => (ctx && typeof ctx === 'object' && !('confirm' in ctx) ? { ...ctx, confirm: yes } : ctx)
  const out = {}
  for (const [name, value] of Object.entries(tools)) {
    if (typeof value !== 'function') out[name] = value
    else if (name === 'runTool') out[name] = (tool, args, ctx) => value(tool, args, withConfirm(ctx))
    else out[name] = (args, ctx) => value(args, withConfirm(ctx))
  }
  return out
}
