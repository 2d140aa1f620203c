/**
 * OpenAI's `response_format: {type: "json_schema"}` -> Anthropic structured outputs
 * (`output_config.format = {type: "json_schema", schema}`, GA, no beta header).
 *
 * Which models: Claude Opus/Sonnet/Haiku 4.5 and later (`claude-opus-4-5`, `claude-sonnet-4-6`,
 * `claude-opus-4-7`, a 5.x, Bedrock's `anthropic.claude-haiku-4-5-...`), by name; Opus 4.1, Opus 4,
 * Sonnet 4, 3.x answer 400 to `output_config.format`. The channel setting `structuredOutputs:
 * true|false` overrides the name rule (a model name the rule does not know, a proxy in front).
 *
 * The schema is adapted to what Anthropic compiles (its structured-outputs docs, "JSON Schema
 * limitations") where that keeps the client's meaning:
 * - an object with `properties` and no `additionalProperties` gets `false` (Anthropic requires it
 *   on every object; OpenAI strict mode requires the same, so strict clients already send it);
 * - keywords it does not compile (numeric bounds, string lengths, array/object sizes past
 *   `minItems` 0/1, `not`, `if`/`then`/`else`, a `format` it does not know, a regex with
 *   lookaround, backreferences or word boundaries, unknown keywords) are removed and written into
 *   the `description`, so the model still reads them (Anthropic's SDKs do the same); `minItems`
 *   above 1 becomes 1; annotations (`$schema`, `examples`...) are left out; `oneOf` becomes `anyOf`
 *   (one branch is generated either way);
 * - an `allOf` member that is a `$ref` (refused) is replaced by the definition it names.
 * A schema that cannot be expressed without changing what it allows gets undefined: an object
 * with `additionalProperties` other than false, or none and no `properties` (a free-form map:
 * `false` would make it always `{}`), `patternProperties`, `prefixItems`, a boolean subschema,
 * `enum` of objects or arrays, an external or unresolvable `$ref`, a recursive one.
 */

import type { ChatRequest } from '../../gateway/chat/types.js';
import { isPlainObject as isSchema } from '../../gateway/plain-object.js';
import type { UpstreamTarget } from '../types.js';
import { claudeVersion } from './claude-model.js';

type Schema = Record<string, unknown>;

export function takesStructuredOutputs(model: string, extra?: Record<string, unknown>): boolean {
  if (typeof extra?.structuredOutputs === 'boolean') return extra.structuredOutputs;
  const v = claudeVersion(model);
  return v !== undefined && (v.major > 4 || (v.major === 4 && v.minor >= 5));
}

/** What Anthropic compiles as it is (besides those `adapt` handles one by one). */
const KEPT = new Set(['type', 'title', 'description', 'default', 'const', 'required']);
/** Annotations that constrain nothing: not sent, and not worth the model's attention. */
const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  '$comment',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
]);
/** Keywords whose meaning cannot be kept (see the header). */
const INEXPRESSIBLE = new Set([
  'patternProperties',
  'prefixItems',
  'unevaluatedProperties',
  'unevaluatedItems',
]);
const FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'uri',
  'ipv4',
  'ipv6',
  'uuid',
]);
/** Regex features Anthropic's docs list as unsupported: lookaround, backreferences, word boundaries. */
const UNSUPPORTED_REGEX = /\(\?<?[=!]|\\[1-9]|\\k<|\\[bB]/;

class Inexpressible extends Error {}

/**
 * The client's schema as Anthropic takes it, or undefined when it cannot be expressed. `description`
 * is the `json_schema.description` OpenAI shows the model; it becomes the root's when that has none.
 */
export function anthropicJsonSchema(schema: Schema, description?: string): Schema | undefined {
  try {
    const out = adapt(schema);
    if (description && out.description === undefined) out.description = description;
    if (recursive(out)) return undefined;
    return inlineAllOfRefs(out, out) as Schema;
  } catch (e) {
    if (e instanceof Inexpressible) return undefined;
    throw e;
  }
}

function sub(v: unknown): Schema {
  if (!isSchema(v)) throw new Inexpressible();
  return adapt(v);
}

function adapt(node: Schema): Schema {
  const out: Schema = {};
  const dropped: string[] = [];
  if (node.anyOf !== undefined && node.oneOf !== undefined) throw new Inexpressible();
  for (const [k, v] of Object.entries(node)) {
    if (KEPT.has(k)) out[k] = v;
    else if (ANNOTATIONS.has(k)) continue;
    else if (INEXPRESSIBLE.has(k)) throw new Inexpressible();
    else if (k === 'properties' || k === '$defs' || k === 'definitions') {
      if (!isSchema(v)) throw new Inexpressible();
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, sub(s)]));
    } else if (k === 'anyOf' || k === 'allOf' || k === 'oneOf') {
      if (!Array.isArray(v)) throw new Inexpressible();
      out[k === 'oneOf' ? 'anyOf' : k] = v.map(sub);
    } else if (k === 'items') out.items = sub(v);
    else if (k === 'additionalProperties') {
      if (v !== false) throw new Inexpressible();
      out.additionalProperties = false;
    } else if (k === 'enum') {
      if (!Array.isArray(v) || v.some((e) => typeof e === 'object' && e !== null)) throw new Inexpressible();
      out.enum = v;
    } else if (k === '$ref') {
      if (typeof v !== 'string' || !v.startsWith('#')) throw new Inexpressible();
      out.$ref = v;
    } else if (k === 'format' && typeof v === 'string' && FORMATS.has(v)) out.format = v;
    else if (k === 'pattern' && typeof v === 'string' && !UNSUPPORTED_REGEX.test(v)) out.pattern = v;
    else if (k === 'minItems' && typeof v === 'number' && v <= 1) out.minItems = v;
    else {
      // Anything else narrows what is valid (minimum, maxLength, a `format` Anthropic does not
      // know, ...) or is unknown to it: the model reads it in the description.
      if (k === 'minItems' && typeof v === 'number') out.minItems = 1;
      dropped.push(`${k}: ${JSON.stringify(v)}`);
    }
  }
  const type = node.type;
  const isObject =
    type === 'object' || (Array.isArray(type) && type.includes('object')) || 'properties' in node;
  if (isObject && out.additionalProperties === undefined) {
    // A free-form map (`{type: "object"}`) would become `{}` every time: not what was asked.
    if (!isSchema(node.properties)) throw new Inexpressible();
    out.additionalProperties = false;
  }
  if (dropped.length > 0) {
    const note = `(${dropped.join(', ')})`;
    out.description =
      typeof out.description === 'string' && out.description ? `${out.description} ${note}` : note;
  }
  return out;
}

/** The subschemas of an adapted schema (what `adapt` keeps). */
function children(node: Schema): unknown[] {
  const out: unknown[] = [];
  for (const k of ['properties', '$defs', 'definitions'])
    if (isSchema(node[k])) out.push(...Object.values(node[k] as Schema));
  for (const k of ['anyOf', 'allOf']) if (Array.isArray(node[k])) out.push(...(node[k] as unknown[]));
  if (node.items !== undefined) out.push(node.items);
  return out;
}

/** A local `$ref` (`#`, `#/$defs/X`, any JSON pointer into the root), or undefined. */
function resolve(root: Schema, ref: string): Schema | undefined {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isSchema(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return isSchema(at) ? at : undefined;
}

/** True when a `$ref` leads back to itself (Anthropic refuses recursive schemas); throws on a dangling one. */
function recursive(root: Schema): boolean {
  const done = new Set<string>();
  const open = new Set<string>();
  const walk = (node: unknown): boolean => {
    if (!isSchema(node)) return false;
    const ref = node.$ref;
    if (typeof ref === 'string' && !done.has(ref)) {
      if (open.has(ref)) return true;
      const target = resolve(root, ref);
      if (!target) throw new Inexpressible();
      open.add(ref);
      if (walk(target)) return true;
      open.delete(ref);
      done.add(ref);
    }
    return children(node).some(walk);
  };
  return walk(root);
}

/** `allOf: [{$ref}]` (Pydantic writes it for a described field) with the definition in place of the ref. */
function inlineAllOfRefs(node: unknown, root: Schema): unknown {
  if (!isSchema(node)) return node;
  const out: Schema = { ...node };
  for (const k of ['properties', '$defs', 'definitions'])
    if (isSchema(node[k]))
      out[k] = Object.fromEntries(
        Object.entries(node[k] as Schema).map(([n, s]) => [n, inlineAllOfRefs(s, root)]),
      );
  if (Array.isArray(node.anyOf)) out.anyOf = node.anyOf.map((s) => inlineAllOfRefs(s, root));
  if (Array.isArray(node.allOf))
    out.allOf = node.allOf.map((s) => {
      const target = isSchema(s) && typeof s.$ref === 'string' ? resolve(root, s.$ref) : undefined;
      return inlineAllOfRefs(target ?? s, root);
    });
  if (node.items !== undefined) out.items = inlineAllOfRefs(node.items, root);
  return out;
}

/**
 * `output_config.format` for a request, or undefined: no `json_schema` format (`json_object` has
 * no Anthropic equivalent, JSON mode without a schema), a model without structured outputs, a
 * schema that cannot be expressed, or an assistant prefill (Anthropic refuses one beside a format;
 * the continuation the client asked for wins, as before). Sent without the format, the request is
 * served as it was before Anthropic had one.
 */
export function anthropicOutputFormat(
  req: ChatRequest,
  target: UpstreamTarget,
  prefill: boolean,
): Schema | undefined {
  const rf = req.response_format;
  if (rf?.type !== 'json_schema' || !rf.json_schema.schema || prefill) return undefined;
  if (!takesStructuredOutputs(target.upstreamModel, target.extra)) return undefined;
  const schema = anthropicJsonSchema(rf.json_schema.schema, rf.json_schema.description);
  return schema && { type: 'json_schema', schema };
}
