// `@eddie/tools-native/openai`: tool definitions for the OpenAI APIs (Chat Completions and
// Responses) whose schemas pass strict mode, and a runner for the calls a model makes.
//
// Strict mode (OpenAI's "Structured Outputs" rules) wants, at every object level,
// `additionalProperties: false` and every property in `required`; an optional property becomes
// nullable (the core treats null as absent); only a subset of JSON Schema is allowed (`default`,
// `minLength`, `maxLength`, ... are not). A free-form map (`env`, `metadata`) cannot be written
// with `additionalProperties: false`, so strict schemas send it as a list of `{name, value}`
// entries (a JSON-encoded `value` when the map holds any JSON), and `runOpenAIToolCalls` turns the
// list back into the object, guided by the tool's own schema.
// @ts-check
'use strict'
const { resolveTools, createSession, settle, specByName, modelSchema, errorInfo } = require('./index.js')

/**
 * A JSON Schema node, as the registry gives it (any shape JSON Schema allows).
 * @typedef {any} Schema
 * @typedef {import('./index.js').Session} Session
 * @typedef {import('./index.js').SessionOptions} SessionOptions
 * @typedef {import('./index.js').ToolRef} ToolRef
 */

/** Keywords strict mode accepts, per OpenAI's supported-schema list. */
const STRICT_KEYWORDS = new Set([
  'type', 'description', 'title', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf',
  '$ref', '$defs', 'definitions',
  'pattern', 'format',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minItems', 'maxItems',
])

/**
 * The types a schema node names.
 * @param {Schema} schema
 * @returns {string[]}
 */
function typesOf(schema) {
  if (Array.isArray(schema.type)) return schema.type
  return schema.type === undefined ? [] : [schema.type]
}

/**
 * A free-form map: an object with no declared properties whose additionalProperties is not false.
 * @param {Schema} schema
 * @returns {boolean}
 */
function isMap(schema) {
  return (
    !!schema && typeof schema === 'object' && typesOf(schema).includes('object') && !schema.properties &&
    schema.additionalProperties !== undefined && schema.additionalProperties !== false
  )
}

/**
 * The strict form of a map: a list of `{name, value}` entries.
 * @param {Schema} schema
 * @returns {Schema}
 */
function strictMap(schema) {
  const valueSchema = schema.additionalProperties
  const anyJson = valueSchema === true || (typeof valueSchema === 'object' && Object.keys(valueSchema).length === 0)
  const value = anyJson
    ? { type: 'string', description: 'The value, JSON-encoded.' }
    : strictSchema(valueSchema, true)
  const note = anyJson ? 'A list of {name, value} entries; each value JSON-encoded.' : 'A list of {name, value} entries.'
  return {
    type: 'array',
    description: schema.description ? `${schema.description} ${note}` : note,
    items: {
      type: 'object',
      properties: { name: { type: 'string' }, value },
      required: ['name', 'value'],
      additionalProperties: false,
    },
  }
}

/**
 * Make `schema` accept null as well (for optional properties).
 * @param {Schema} schema
 * @returns {Schema}
 */
function nullable(schema) {
  if (schema.anyOf) {
    return schema.anyOf.some((/** @type {Schema} */ b) => typesOf(b).includes('null')) ? schema : { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] }
  }
  const types = typesOf(schema)
  if (types.length === 0) return { anyOf: [schema, { type: 'null' }] }
  if (types.includes('null')) return schema
  const out = { ...schema, type: [...types, 'null'] }
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) out.enum = [...schema.enum, null]
  return out
}

/**
 * The strict-mode form of one schema node (`keepNull`: already allowed to be null).
 * @param {Schema} schema
 * @returns {Schema}
 */
function strictSchema(schema, _nested = false) {
  if (schema === true || schema === undefined) return { type: 'string', description: 'Any JSON value, JSON-encoded.' }
  if (!schema || typeof schema !== 'object') return schema
  if (isMap(schema)) return strictMap(schema)
  /** @type {Record<string, any>} */
  const out = {}
  for (const [k, v] of Object.entries(schema)) {
    if (!STRICT_KEYWORDS.has(k)) continue
    if (k === 'properties' || k === 'required' || k === 'additionalProperties') continue
    if (k === 'items') out.items = strictSchema(v, true)
    else if (k === 'anyOf') out.anyOf = v.map((/** @type {Schema} */ b) => strictSchema(b, true))
    else if (k === '$defs' || k === 'definitions') out[k] = Object.fromEntries(Object.entries(v).map(([n, d]) => [n, strictSchema(d, true)]))
    else out[k] = v
  }
  // An enum without a type gets the type of its values (strict mode wants a type on every node).
  if (out.type === undefined && Array.isArray(out.enum) && out.enum.length) {
    const kinds = [...new Set(out.enum.map((/** @type {unknown} */ v) => (v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v)))]
    if (kinds.every((k) => ['string', 'integer', 'number', 'boolean', 'null'].includes(k))) out.type = kinds.length === 1 ? kinds[0] : kinds
  }
  if (schema.properties || typesOf(schema).includes('object')) {
    const required = new Set(schema.required ?? [])
    /** @type {Record<string, Schema>} */
    const properties = {}
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      const converted = strictSchema(prop, true)
      properties[name] = required.has(name) ? converted : nullable(converted)
    }
    out.properties = properties
    out.required = Object.keys(properties)
    out.additionalProperties = false
  }
  return out
}

/**
 * A property that only spells another agent's argument (its description starts `TunaCode: ...`,
 * `Stack's spelling of ...`, `Stack: ...`), or a `style` that picks a seed's behaviour: strict mode makes every property required, so each
 * would cost the model a null on every call. Strict schemas leave them out; the core still
 * accepts them (a model trained on that agent may send them anyway).
 */
const SEED_PROPERTY = /^(TunaCode|Stack|Floyd|Alfredo)(:|'s )/
/** The seeds' names, as a `style` enum spells them (`style: 'tunacode'` picks TunaCode's behaviour). */
const SEED_STYLES = new Set(['default', 'tunacode', 'alfredo', 'stack', 'floyd'])

/**
 * Whether property `name` of a tool's schema is a seed's: a seed's spelling (SEED_PROPERTY), or
 * a `style` that only picks a seed's behaviour (which the seed's own spellings pick as well).
 * @param {string} name
 * @param {any} prop
 */
function isSeedProperty(name, prop) {
  if (SEED_PROPERTY.test(typeof prop?.description === 'string' ? prop.description : '')) return true
  return name === 'style' && Array.isArray(prop?.enum) && prop.enum.every((/** @type {unknown} */ v) => typeof v === 'string' && SEED_STYLES.has(v))
}

/**
 * `jsonSchema` without the seeds' spellings of its arguments (see SEED_PROPERTY).
 * @param {Record<string, any>} jsonSchema
 * @returns {Record<string, any>}
 */
function withoutSeedProperties(jsonSchema) {
  const props = jsonSchema.properties
  if (!props || typeof props !== 'object') return jsonSchema
  const kept = Object.entries(props).filter(([n, p]) => !isSeedProperty(n, p))
  if (kept.length === Object.keys(props).length) return jsonSchema
  const names = new Set(kept.map(([n]) => n))
  /** @type {Record<string, any>} */
  const out = { ...jsonSchema, properties: Object.fromEntries(kept) }
  if (Array.isArray(jsonSchema.required)) out.required = jsonSchema.required.filter((/** @type {string} */ n) => names.has(n))
  return out
}

/**
 * A tool's input schema as strict mode accepts it (without the seeds' spellings, see SEED_PROPERTY).
 * @param {Record<string, unknown>} jsonSchema
 * @returns {Record<string, unknown>}
 */
function toStrictSchema(jsonSchema) {
  return strictSchema(withoutSeedProperties({ type: 'object', ...jsonSchema }))
}

/**
 * The schema sent when `strict` is false: the tool's own schema, plus `additionalProperties:
 * false` on objects with declared properties (unknown keys are refused by the core anyway).
 * @param {Record<string, unknown>} jsonSchema
 * @returns {Record<string, unknown>}
 */
function toLooseSchema(jsonSchema) {
  /** @type {(s: Schema) => Schema} */
  const walk = (s) => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return s
    const out = { ...s }
    if (s.properties) {
      out.properties = Object.fromEntries(Object.entries(s.properties).map(([n, p]) => [n, walk(p)]))
      if (out.additionalProperties === undefined) out.additionalProperties = false
    }
    if (s.items) out.items = walk(s.items)
    if (s.anyOf) out.anyOf = s.anyOf.map(walk)
    return out
  }
  return walk({ type: 'object', ...jsonSchema })
}

/**
 * Tool definitions for the OpenAI API. `api`: 'chat' (default; `{type: 'function', function:
 * {...}}`) or 'responses' (`{type: 'function', name, ...}`). `strict` (default true): strict
 * schemas as described above.
 * @param {readonly ToolRef[] | import('./index.js').ProfileName | null | undefined} tools
 * @param {{api?: 'chat' | 'responses', strict?: boolean}} [options]
 */
function toOpenAITools(tools, options = {}) {
  const { api = 'chat', strict = true } = options
  if (api !== 'chat' && api !== 'responses') throw new RangeError("api must be 'chat' or 'responses'")
  return resolveTools(tools).map((spec) => {
    const parameters = strict ? toStrictSchema(modelSchema(spec)) : toLooseSchema(modelSchema(spec))
    const fn = { name: spec.name, description: spec.description, parameters, strict }
    return api === 'chat' ? { type: 'function', function: fn } : { type: 'function', ...fn }
  })
}

/**
 * Arguments as the tool expects them, from what a strict-mode model sent: nulls dropped where the
 * schema declares properties (they mean "absent"), entry lists turned back into maps (where a null
 * value keeps its meaning, e.g. "unset this variable"), JSON-encoded values parsed.
 * @param {any} value
 * @param {Schema} schema
 * @returns {any}
 */
function decodeArgs(value, schema) {
  if (!schema || typeof schema !== 'object') return value
  if (isMap(schema)) {
    if (!Array.isArray(value)) return value
    const anyJson = schema.additionalProperties === true || Object.keys(schema.additionalProperties).length === 0
    /** @type {Record<string, unknown>} */
    const out = {}
    for (const entry of value) {
      if (!entry || typeof entry !== 'object' || typeof entry.name !== 'string') return value
      let v = entry.value
      if (anyJson && typeof v === 'string') {
        try {
          v = JSON.parse(v)
        } catch {
          // a plain string that was not encoded: keep it
        }
      }
      out[entry.name] = v
    }
    return out
  }
  if (Array.isArray(value)) return schema.items ? value.map((v) => decodeArgs(v, schema.items)) : value
  if (value && typeof value === 'object' && schema.properties) {
    /** @type {Record<string, unknown>} */
    const out = {}
    for (const [k, v] of Object.entries(value)) {
      if (v === null) continue
      out[k] = decodeArgs(v, schema.properties[k])
    }
    return out
  }
  if (schema.anyOf && value && typeof value === 'object') {
    const branch = schema.anyOf.find((/** @type {Schema} */ b) => (Array.isArray(value) ? typesOf(b).includes('array') : b.properties || isMap(b)))
    return branch ? decodeArgs(value, branch) : value
  }
  return value
}

/**
 * The arguments a model sent (JSON text, or already an object).
 * @param {unknown} raw
 * @returns {any}
 */
function parseArguments(raw) {
  if (raw === undefined || raw === null || raw === '') return {}
  if (typeof raw !== 'string') return raw
  try {
    return JSON.parse(raw)
  } catch (e) {
    const error = /** @type {Error & {code?: string}} */ (new Error(`INVALID_ARGUMENT: the arguments are not valid JSON (${errorInfo(e).message})`))
    error.code = 'INVALID_ARGUMENT'
    throw error
  }
}

/**
 * One call in either shape: chat `{id, function: {name, arguments}}` or responses `{call_id, name, arguments}`.
 * @param {any} call
 * @returns {{api: 'chat' | 'responses', id: string, name: string, arguments: unknown}}
 */
function normalizeCall(call) {
  if (call?.function) return { api: 'chat', id: call.id, name: call.function.name, arguments: call.function.arguments }
  return { api: 'responses', id: call?.call_id ?? call?.id, name: call?.name, arguments: call?.arguments }
}

/**
 * Run the tool calls of one model turn (in order) in `session` and return what goes back to the
 * model: chat `{role: 'tool', tool_call_id, content}` messages, or Responses
 * `{type: 'function_call_output', call_id, output}` items. Errors become their `CODE: message`
 * text; nothing throws. `options.signal` aborts the calls. Calls of items that are not
 * function calls (e.g. Responses `message` items) are skipped.
 * @param {readonly any[] | null | undefined} calls
 * @param {Session | SessionOptions} [session]
 * @param {{signal?: AbortSignal}} [options]
 */
async function runOpenAIToolCalls(calls, session, options = {}) {
  const s = createSession(session)
  /** @type {({role: 'tool', tool_call_id: string, content: string} | {type: 'function_call_output', call_id: string, output: string})[]} */
  const out = []
  for (const raw of calls ?? []) {
    if (raw?.type && raw.type !== 'function' && raw.type !== 'function_call') continue
    const call = normalizeCall(raw)
    let text
    try {
      const spec = specByName(call.name)
      const args = decodeArgs(parseArguments(call.arguments), { type: 'object', ...spec.jsonSchema })
      text = (await settle(s, spec.name, args, { signal: options.signal })).text
    } catch (e) {
      const code = /** @type {{code?: string}} */ (e)?.code ?? 'INVALID_ARGUMENT'
      text = `${code}: ${errorInfo(e).message.replace(/^[A-Z_]+: /, '')}`
    }
    out.push(call.api === 'chat' ? { role: 'tool', tool_call_id: call.id, content: text } : { type: 'function_call_output', call_id: call.id, output: text })
  }
  return out
}

/**
 * Tools for the SDK's own loop, `client.chat.completions.runTools({tools, ...})`: each is
 * `{type: 'function', function: {name, description, parameters, parse, function}}` with strict
 * schemas by default; `function` returns the text a model reads (an error as `CODE: message`).
 * @param {readonly ToolRef[] | null | undefined} tools
 * @param {Session | SessionOptions} [session]
 * @param {{strict?: boolean, signal?: AbortSignal}} [options]
 */
function toOpenAIRunnableTools(tools, session, options = {}) {
  const s = createSession(session)
  const { strict = true } = options
  return resolveTools(tools).map((spec) => {
    const schema = { type: 'object', ...spec.jsonSchema }
    return {
      type: 'function',
      function: {
        name: spec.name,
        description: spec.description,
        parameters: strict ? toStrictSchema(modelSchema(spec)) : toLooseSchema(modelSchema(spec)),
        strict,
        parse: (/** @type {unknown} */ raw) => parseArguments(raw),
        function: async (/** @type {unknown} */ args) => (await settle(s, spec.name, decodeArgs(args, schema), { signal: options.signal })).text,
      },
    }
  })
}

module.exports = { toOpenAITools, runOpenAIToolCalls, toOpenAIRunnableTools, toStrictSchema, toLooseSchema, decodeArgs, STRICT_KEYWORDS, SEED_PROPERTY }
