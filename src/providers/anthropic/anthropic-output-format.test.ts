import { describe, expect, it } from 'vitest';
import { anthropicJsonSchema, takesStructuredOutputs } from './anthropic-output-format.js';

describe('takesStructuredOutputs', () => {
  it('Claude 4.5 and later by name, in Anthropic, Bedrock and Vertex spellings; not 4.1, 4, 3.x', () => {
    for (const m of [
      'claude-sonnet-4-5',
      'claude-sonnet-4-5-20250929',
      'claude-opus-4-5-20251101',
      'claude-haiku-4-5',
      'claude-opus-4-6',
      'claude-sonnet-4-6',
      'claude-opus-4-7',
      'claude-opus-5',
      'anthropic.claude-haiku-4-5-20251001-v1:0',
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'claude-sonnet-4-5@20250929',
      'claude-opus-4.5',
    ])
      expect(takesStructuredOutputs(m), m).toBe(true);
    for (const m of [
      'claude-opus-4-1-20250805',
      'claude-opus-4-1',
      'claude-opus-4-20250514',
      'claude-sonnet-4-20250514',
      'claude-sonnet-4-0',
      'claude-3-7-sonnet-20250219',
      'claude-3-5-haiku-latest',
      'gpt-4o',
    ])
      expect(takesStructuredOutputs(m), m).toBe(false);
  });

  it('the channel setting wins over the name', () => {
    expect(takesStructuredOutputs('claude-sonnet-4-5', { structuredOutputs: false })).toBe(false);
    expect(takesStructuredOutputs('my-claude', { structuredOutputs: true })).toBe(true);
    expect(takesStructuredOutputs('claude-sonnet-4-5', { structuredOutputs: 'yes' })).toBe(true);
  });
});

describe('anthropicJsonSchema', () => {
  const obj = (properties: Record<string, unknown>, more: Record<string, unknown> = {}) => ({
    type: 'object',
    properties,
    ...more,
  });

  it('closes objects, keeps what Anthropic compiles, and moves the rest into the description', () => {
    expect(
      anthropicJsonSchema(
        obj(
          {
            id: { type: 'string', format: 'uuid', pattern: '^[a-f0-9-]+$' },
            at: { type: 'string', format: 'date-time' },
            site: { type: 'string', format: 'uri-reference' },
            code: { type: 'string', pattern: '^(?!x)\\w+$' },
            tags: { type: 'array', items: { type: 'string' }, minItems: 3, uniqueItems: true },
            n: { type: ['integer', 'null'], exclusiveMinimum: 0, examples: [1] },
            kind: { enum: ['a', 'b', null], default: 'a', title: 'Kind' },
          },
          { required: ['id'] },
        ),
      ),
    ).toEqual(
      obj(
        {
          id: { type: 'string', format: 'uuid', pattern: '^[a-f0-9-]+$' },
          at: { type: 'string', format: 'date-time' },
          site: { type: 'string', description: '(format: "uri-reference")' },
          code: { type: 'string', description: '(pattern: "^(?!x)\\\\w+$")' },
          tags: {
            type: 'array',
            items: { type: 'string' },
            minItems: 1,
            description: '(minItems: 3, uniqueItems: true)',
          },
          n: { type: ['integer', 'null'], description: '(exclusiveMinimum: 0)' },
          kind: { enum: ['a', 'b', null], default: 'a', title: 'Kind' },
        },
        { required: ['id'], additionalProperties: false },
      ),
    );
  });

  it('a definition used in allOf is put in place of its $ref; elsewhere the $ref stays', () => {
    const s = anthropicJsonSchema(
      obj(
        { a: { allOf: [{ $ref: '#/definitions/A' }] }, b: { $ref: '#/definitions/A' } },
        { definitions: { A: obj({ x: { type: 'boolean' } }) } },
      ),
    )!;
    const closedA = obj({ x: { type: 'boolean' } }, { additionalProperties: false });
    expect(s.properties).toEqual({ a: { allOf: [closedA] }, b: { $ref: '#/definitions/A' } });
  });

  it('the json_schema description becomes the root description when it has none', () => {
    expect(anthropicJsonSchema(obj({}), 'A thing')?.description).toBe('A thing');
    expect(anthropicJsonSchema(obj({}, { description: 'Own' }), 'A thing')?.description).toBe('Own');
  });

  it('what cannot be expressed without changing what it allows is undefined', () => {
    const defs = (Node: unknown) => obj({ root: { $ref: '#/$defs/Node' } }, { $defs: { Node } });
    for (const [what, schema] of [
      ['additionalProperties true', obj({}, { additionalProperties: true })],
      ['additionalProperties a schema', obj({}, { additionalProperties: { type: 'number' } })],
      ['a free-form object', obj({ m: { type: 'object' } })],
      ['patternProperties', obj({}, { patternProperties: { '^x': { type: 'string' } } })],
      ['prefixItems', obj({ t: { type: 'array', prefixItems: [{ type: 'string' }] } })],
      ['a boolean subschema', obj({ any: true })],
      ['an enum of objects', obj({ e: { enum: [{ a: 1 }] } })],
      ['an external $ref', obj({ a: { $ref: 'other.json#/A' } })],
      ['a dangling $ref', obj({ a: { $ref: '#/$defs/Missing' } })],
      ['a self-recursive definition', defs(obj({ next: { $ref: '#/$defs/Node' } }))],
      ['recursion through the root', obj({ child: { anyOf: [{ $ref: '#' }, { type: 'null' }] } })],
      ['anyOf beside oneOf', obj({ a: { anyOf: [{ type: 'string' }], oneOf: [{ type: 'number' }] } })],
    ] as const)
      expect(anthropicJsonSchema(schema as Record<string, unknown>), what).toBeUndefined();
  });

  it('a definition used twice (not a cycle) is fine', () => {
    const s = obj(
      { a: { $ref: '#/$defs/P' }, b: { type: 'array', items: { $ref: '#/$defs/P' } } },
      { $defs: { P: obj({ q: { $ref: '#/$defs/Q' } }), Q: obj({ r: { type: 'string' } }) } },
    );
    expect(anthropicJsonSchema(s)).toBeDefined();
  });
});
