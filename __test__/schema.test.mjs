// The one JSON Schema validator of the tests (helpers.mjs `schemaErrors`): it rejects what it
// should, and every tool schema stays within the subset it understands.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import * as tools from '../index.js'
import { schemaErrors, assertMatchesSchema, SCHEMA_KEYWORDS } from './helpers.mjs'

test('schemaErrors checks each keyword of the subset', () => {
  const ok = (schema, value) => assert.deepEqual(schemaErrors(schema, value), [], JSON.stringify([schema, value]))
  const bad = (schema, value) => assert.notDeepEqual(schemaErrors(schema, value), [], JSON.stringify([schema, value]))
  ok({ type: 'integer' }, 3); bad({ type: 'integer' }, 3.5); ok({ type: 'number' }, 3); bad({ type: 'number' }, '3')
  ok({ type: ['string', 'null'] }, null); ok({ type: ['string', 'null'] }, 'x'); bad({ type: ['string', 'null'] }, 1)
  bad({ type: 'object' }, []); bad({ type: 'array' }, {}); bad({ type: 'boolean' }, 0)
  ok({ enum: ['a', 1] }, 1); bad({ enum: ['a', 1] }, 'b'); ok({ const: { a: [1] } }, { a: [1] }); bad({ const: 'file' }, 'dir')
  ok({ anyOf: [{ type: 'string' }, { type: 'integer' }] }, 1); bad({ anyOf: [{ type: 'string' }, { type: 'integer' }] }, true)
  ok({ oneOf: [{ type: 'string' }, { type: 'integer' }] }, 1); bad({ oneOf: [{ type: 'number' }, { type: 'integer' }] }, 1)
  bad({ allOf: [{ type: 'integer' }, { minimum: 2 }] }, 1)
  const obj = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }
  ok(obj, { a: 'x' }); bad(obj, {}); bad(obj, { a: 1 }); bad(obj, { a: 'x', b: 1 })
  const map = { type: 'object', additionalProperties: { type: ['string', 'null'] } }
  ok(map, { A: 'x', B: null }); bad(map, { A: 1 })
  ok({ type: 'object', properties: { a: { type: 'string' } } }, { b: 1 })
  ok({ type: 'array', items: { type: 'integer' }, minItems: 1, maxItems: 2 }, [1]); bad({ type: 'array', items: { type: 'integer' } }, [1, 'x'])
  bad({ type: 'array', minItems: 1 }, []); bad({ type: 'array', maxItems: 1 }, [1, 2])
  ok({ minimum: 0, maximum: 2 }, 0); bad({ minimum: 0 }, -1); bad({ maximum: 2 }, 3); bad({ exclusiveMinimum: 0 }, 0); bad({ exclusiveMaximum: 2 }, 2)
  ok({ minLength: 1 }, 'é'); bad({ minLength: 1 }, ''); bad({ maxLength: 1 }, '😀😀'); bad({ pattern: '^a' }, 'ba')
  const tree = { type: 'object', properties: { entries: { type: 'array', items: { type: 'object', properties: { entries: { $ref: '#/properties/entries' } } } } } }
  ok(tree, { entries: [{ entries: [{ entries: [] }] }] }); bad(tree, { entries: [{ entries: [{ entries: 'x' }] }] })
  bad({ type: 'string', format: 'email' }, 'x'); bad(false, 1); ok(true, 1)
  assert.throws(() => assertMatchesSchema({ type: 'string' }, 1))
})

test('every tool schema uses only keywords schemaErrors understands', () => {
  const walk = (s, at, out) => {
    if (typeof s !== 'object' || s === null) return
    for (const [k, v] of Object.entries(s)) {
      if (!SCHEMA_KEYWORDS.has(k)) out.push(`${at}.${k}`)
      if (k === 'properties') for (const [p, sub] of Object.entries(v)) walk(sub, `${at}.properties.${p}`, out)
      else if (k === 'items' || k === 'additionalProperties') walk(v, `${at}.${k}`, out)
      else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') v.forEach((sub, i) => walk(sub, `${at}.${k}[${i}]`, out))
    }
  }
  const unknown = []
  for (const s of tools.toolSpecs()) {
    walk(s.jsonSchema, `${s.name}.jsonSchema`, unknown)
    walk(s.outputSchema, `${s.name}.outputSchema`, unknown)
  }
  assert.deepEqual(unknown, [])
})
