import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { INT32_MAX, Nullable } from './schemas.js';
import { describeAjvError, validatorCompiler } from './validation.js';

/** The 400 message a body gets against `schema`, or null when it passes. */
function messageFor(schema: object, body: unknown): string | null {
  const validate = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '/' } as any) as any;
  if (validate(body)) return null;
  return describeAjvError(validate.errors, 'body').message;
}

const KeyLike = Type.Object(
  {
    rpm_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: INT32_MAX }))),
    quota_limit: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
    expires_time: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    top_p: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 1 }))),
    url: Type.Optional(Nullable(Type.String({ maxLength: 10 }))),
    price: Type.Optional(
      Type.Union([
        Type.String({ pattern: '^[0-9.]+$', 'x-accepts': 'a numeric string' }),
        Type.Number({ minimum: 0 }),
      ]),
    ),
    tags: Type.Optional(
      Type.Union([Type.String({ maxLength: 20 }), Type.Array(Type.String(), { maxItems: 2 }), Type.Null()]),
    ),
    sort: Type.Optional(
      Type.Union([
        Type.Literal('price'),
        Type.Literal('latency'),
        Type.Object({ by: Type.Unsafe({ type: 'string', enum: ['price', 'latency'] }) }),
      ]),
    ),
    labels: Type.Optional(Type.Record(Type.String(), Type.String(), { propertyNames: { maxLength: 8 } })),
    content: Type.Optional(
      Type.Union([
        Type.String(),
        Type.Array(
          Type.Union([
            Type.Object({ type: Type.Literal('text'), text: Type.String() }),
            Type.Object({ type: Type.Literal('image_url'), image_url: Type.String() }),
          ]),
        ),
      ]),
    ),
  },
  { additionalProperties: false },
);

describe('validation messages', () => {
  it('say what a nullable number accepts instead of "not one of the accepted shapes"', () => {
    expect(messageFor(KeyLike, { rpm_limit: 1000.5 })).toBe(
      'rpm_limit: must be an integer from 1 to 2147483647, or null',
    );
    expect(messageFor(KeyLike, { rpm_limit: 0 })).toBe(
      'rpm_limit: must be an integer from 1 to 2147483647, or null',
    );
    expect(messageFor(KeyLike, { rpm_limit: '5' })).toBe(
      'rpm_limit: must be an integer from 1 to 2147483647, or null',
    );
    expect(messageFor(KeyLike, { quota_limit: -1 })).toBe('quota_limit: must be a number >= 0, or null');
    expect(messageFor(KeyLike, { expires_time: 1.5 })).toBe('expires_time: must be an integer >= 0, or null');
    expect(messageFor(KeyLike, { top_p: 0 })).toBe('top_p: must be a number > 0 and <= 1, or null');
    expect(messageFor(KeyLike, { url: 5 })).toBe('url: must be a string of at most 10 characters, or null');
    expect(messageFor(KeyLike, { rpm_limit: null, quota_limit: null, url: null })).toBeNull();
  });

  it("use a schema's own wording where a pattern says nothing to a person", () => {
    expect(messageFor(KeyLike, { price: 'abc' })).toBe('price: must be a numeric string, or a number >= 0');
    expect(messageFor(KeyLike, { price: -2 })).toBe('price: must be a numeric string, or a number >= 0');
  });

  it('name constants, and objects by their constant member', () => {
    expect(messageFor(KeyLike, { sort: 'cheap' })).toBe('sort: must be "price", "latency", or an object');
    expect(messageFor(KeyLike, { content: [{ type: 'video' }] })).toBe(
      'content.0: must be an object with type "text", or an object with type "image_url"',
    );
  });

  it('describe the problem inside an object or array when one branch takes it', () => {
    expect(messageFor(KeyLike, { sort: { by: 'cost' } })).toBe('sort.by: must be one of "price", "latency"');
    expect(messageFor(KeyLike, { tags: ['a', 'b', 'c'] })).toBe('tags: must NOT have more than 2 items');
    expect(messageFor(KeyLike, { tags: ['a', 3] })).toBe('tags.1: must be string');
    expect(messageFor(KeyLike, { tags: 3 })).toBe(
      'tags: must be a string of at most 20 characters, an array of at most 2 items, or null',
    );
  });

  it('describe the problem inside an object whose constant type names its branch', () => {
    expect(messageFor(KeyLike, { content: [{ type: 'image_url', image_url: 5 }] })).toBe(
      'content.0.image_url: must be string',
    );
    expect(messageFor(KeyLike, { content: [{ type: 'text' }] })).toBe('content.0.text: is required');
    expect(messageFor(KeyLike, { labels: { ['k'.repeat(9)]: 'v' } })).toBe(
      'labels: key "kkkkkkkkk" must NOT have more than 8 characters',
    );
  });

  it('say an empty string is empty, as the fields checked after the schema do', () => {
    const Named = Type.Object({
      name: Type.String({ minLength: 1 }),
      code: Type.Optional(Type.String({ minLength: 3 })),
      map: Type.Optional(Type.Record(Type.String(), Type.String(), { propertyNames: { minLength: 1 } })),
    });
    expect(messageFor(Named, { name: '' })).toBe('name: must not be empty');
    expect(messageFor(Named, { name: 'x', map: { '': 'v' } })).toBe('map: key "" must not be empty');
    expect(messageFor(Named, { name: 'x', code: 'ab' })).toBe('code: must NOT have fewer than 3 characters');
  });

  it('keep the field-first shape for other problems', () => {
    expect(messageFor(KeyLike, { nope: 1 })).toBe('nope: unknown field');
    expect(messageFor(Type.Object({ name: Type.String() }), {})).toBe('name: is required');
    expect(messageFor(Type.Object({ n: Type.Integer({ minimum: 1 }) }), { n: 0 })).toBe('n: must be >= 1');
  });
});
