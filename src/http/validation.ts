import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { badRequest } from '../gateway/errors.js';
import { MAX_JSON_DEPTH, tooDeep } from './nesting.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Bodies are validated strictly: a wrong type is the client's mistake and gets a 400 naming the
// field. Query strings and path params are text on the wire, so those are coerced. `verbose`
// puts the failing schema and value on each error (only when validation fails), so a union can
// be described by what it accepts.
// `inlineRefs: false`: each `$ref` is its own function (see `splitForJit`).
const strict = addFormats(
  new Ajv({
    allErrors: false,
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    verbose: true,
    inlineRefs: false,
  }),
);
const coercing = addFormats(
  new Ajv({
    allErrors: false,
    coerceTypes: true,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    verbose: true,
  }),
);

/**
 * A problem a check after the schema found in a body: where (`["tools", 2, "function", "name"]`)
 * and what, worded as the schema's errors are ("is already the name of tools.0").
 */
export interface BodyProblem {
  path: readonly (string | number)[];
  message: string;
}

interface BodyHooks {
  prepare: (body: unknown) => void;
  check?: (body: unknown) => BodyProblem | undefined;
}
/** Body normalizers and checks by schema object: see `prepareBody`. */
const preparers = new WeakMap<object, BodyHooks>();

/**
 * Registers `prepare` to run on a body after the depth check and before `schema` validates it,
 * inside the same validator (no extra hook on the request path). It may rewrite the body in
 * place, as ajv's own defaults do. `check`, when given, runs on a body the schema accepted, for
 * what a schema cannot say (one member against another: a name declared twice, a choice naming
 * nothing declared); the problem it returns is the 400, worded and named as the schema's are. It
 * may rewrite the body too. Returns `schema` so it can wrap a schema's declaration.
 */
export function prepareBody<T extends object>(
  schema: T,
  prepare: (body: unknown) => void,
  check?: (body: unknown) => BodyProblem | undefined,
): T {
  preparers.set(schema, { prepare, check });
  return schema;
}

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  if (httpPart === 'body') {
    return boundedDepth(compileBody(schema as object), preparers.get(schema as object)) as any;
  }
  return decimalsOnly(schema as JsonSchema, coercing.compile(schema as object));
};

/**
 * The ajv function that validates a request body against `schema`, its large parts split off
 * (`splitForJit`; `splitChars: Infinity` keeps it whole, for comparing the two).
 */
export function compileBody(schema: object, splitChars = SPLIT_CHARS): ValidateFunction {
  return strict.compile(splitForJit(schema, splitChars));
}

/**
 * A subschema whose JSON is longer than this is compiled as a function of its own. 1,500 left the
 * chat request's root function at 62 KB of bytecode, 600 at 49 KB; 300 leaves it at
 * 27 KB, room for the schema to grow (test/foundation/validator-jit.test.ts holds every hot body
 * schema's functions to what V8 optimizes).
 */
const SPLIT_CHARS = 300;
const SPLIT_DEF = 'mg_split_';

/**
 * A copy of `schema` for ajv in which every large subschema reached from the root through
 * `properties` and `items` alone is moved to `$defs` and named by a `$ref`, so ajv (with
 * `inlineRefs: false`) compiles it as a function of its own. Ajv inlines a whole schema into one
 * function otherwise: the chat request's came to 121 KB of bytecode, past the 60 KB V8's
 * optimizing compiler takes, so it ran unoptimized on every request, ~10x slower (0.98 µs
 * against 0.095 for a two-message body, and more in the inline caches it called; the gateway's
 * CPU per request fell by 7-8% with the split: docs/performance.md, session 37).
 *
 * Nothing under a union (`anyOf`, `oneOf`, `allOf`, `if`/`then`/`else`, `not`) is split off: an
 * error's `schemaPath` in a referenced function is relative to it, and `describeAjvError` finds
 * a union's branch errors by their path under the union's. A whole union moves as one piece, so
 * its errors and its branches' keep one root. The route's own schema (and so the OpenAPI
 * document) is left as it is.
 */
export function splitForJit(schema: object, splitChars = SPLIT_CHARS): object {
  const defs: Record<string, object> = {};
  let n = 0;
  const walk = (s: unknown): unknown => {
    if (s === null || typeof s !== 'object' || Array.isArray(s)) return s;
    const node = s as { properties?: unknown; items?: unknown };
    let out: Record<string, unknown> | undefined;
    const props = node.properties;
    if (props !== null && typeof props === 'object' && !Array.isArray(props)) {
      const copy: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(props)) copy[k] = hoist(v);
      out = { ...node, properties: copy };
    }
    if (node.items !== null && typeof node.items === 'object' && !Array.isArray(node.items))
      out = { ...(out ?? node), items: hoist(node.items) };
    return out ?? s;
  };
  const hoist = (s: unknown): unknown => {
    const w = walk(s);
    if (w === null || typeof w !== 'object' || JSON.stringify(w).length <= splitChars) return w;
    const name = `${SPLIT_DEF}${n++}`;
    defs[name] = w;
    return { $ref: `#/$defs/${name}` };
  };
  const root = walk(schema) as Record<string, unknown>;
  if (n === 0) return schema;
  return { ...root, $defs: { ...(root.$defs as object | undefined), ...defs } };
}

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
}

const INTEGER = /^-?[0-9]+$/;
const NUMBER = /^-?[0-9]+(?:\.[0-9]+)?$/;

/** What a number in a URL is refused with: `must be number` told a `1e-7` nothing. */
const PLAIN_DECIMAL = 'must be a plain decimal number, such as 0.15 (no exponent)';

/**
 * Ajv coerces query and path text the way JavaScript's Number() does, so `0x10`, `1e2`, `0b1`,
 * ` 1` and the empty string would be read as numbers. Numbers in a URL are plain decimals: any
 * other spelling is refused here, before ajv coerces: an integer with the error ajv would give for
 * a word, a number saying it is written as a plain decimal.
 */
function decimalsOnly(schema: JsonSchema, validate: ValidateFunction): ValidateFunction {
  const numeric: [string, RegExp, string][] = [];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const types = [prop, ...(prop.anyOf ?? [])].flatMap((p) => p.type ?? []);
    if (types.includes('integer')) numeric.push([name, INTEGER, 'integer']);
    else if (types.includes('number')) numeric.push([name, NUMBER, 'number']);
  }
  if (numeric.length === 0) return validate;
  const check = ((data: unknown) => {
    if (data !== null && typeof data === 'object') {
      for (const [name, pattern, type] of numeric) {
        const v = (data as Record<string, unknown>)[name];
        if (typeof v === 'string' && !pattern.test(v)) {
          check.errors = [
            {
              keyword: 'type',
              instancePath: `/${name}`,
              schemaPath: '',
              params: { type },
              message: type === 'number' ? PLAIN_DECIMAL : `must be ${type}`,
            },
          ];
          return false;
        }
      }
    }
    const ok = validate(data);
    check.errors = validate.errors;
    return ok;
  }) as ValidateFunction;
  return check;
}

/** A body nested past MAX_JSON_DEPTH is refused before the schema (or anything after it) walks it. */
function boundedDepth(validate: ValidateFunction, hooks?: BodyHooks): ValidateFunction {
  const check = ((data: unknown) => {
    const path = tooDeep(data);
    if (path !== undefined) {
      check.errors = [
        {
          keyword: 'maxDepth',
          instancePath: path.map((p) => `/${p}`).join(''),
          schemaPath: '',
          params: { limit: MAX_JSON_DEPTH },
          message: `nested more than ${MAX_JSON_DEPTH} levels`,
        },
      ];
      return false;
    }
    hooks?.prepare(data);
    const ok = validate(data);
    check.errors = validate.errors;
    if (!ok || !hooks?.check) return ok;
    const problem = hooks.check(data);
    if (problem === undefined) return true;
    check.errors = [
      {
        keyword: 'check',
        instancePath: problem.path.map((p) => `/${p}`).join(''),
        schemaPath: '',
        params: {},
        message: problem.message,
      },
    ];
    return false;
  }) as ValidateFunction;
  return check;
}

/**
 * One readable sentence for the first validation problem, naming the field.
 *
 * A union (anyOf) that fails reports every branch's error before its own. The union's message
 * says what the field accepts ("tpm_limit: must be an integer from 1 to 2147483647, or null"),
 * unless the value is an object or array and exactly one branch takes objects or arrays: then
 * the problem is inside that value, and that branch's own error is described instead.
 */
export function describeAjvError(
  errors: ErrorObject[],
  part: string | undefined,
): { message: string; param: string } {
  // With allErrors off, a failed union is an ancestor of the failure; the last one is outermost.
  const union = errors.findLast((x) => x.keyword === 'anyOf');
  if (union) {
    const inner = innerBranchErrors(errors, union);
    if (inner.length > 0) return describeAjvError(inner, part);
  }
  const e = union ?? errors[0]!;
  const path = e.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const where = path || (part === 'body' ? 'body' : (part ?? 'request'));
  switch (e.keyword) {
    case 'required': {
      const field = [path, (e.params as { missingProperty: string }).missingProperty]
        .filter(Boolean)
        .join('.');
      return { message: `${field}: is required`, param: field };
    }
    case 'additionalProperties': {
      const field = [path, (e.params as { additionalProperty: string }).additionalProperty]
        .filter(Boolean)
        .join('.');
      return { message: `${field}: unknown field`, param: field };
    }
    case 'enum':
      return {
        message: `${where}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`,
        param: where,
      };
    case 'anyOf': {
      const accepted = Array.isArray(e.schema) ? describeUnion(e.schema as Shape[]) : undefined;
      return {
        message: `${where}: ${accepted ? `must be ${accepted}` : 'is not one of the accepted shapes or values'}`,
        param: where,
      };
    }
    case 'const':
      return {
        message: `${where}: must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`,
        param: where,
      };
    default: {
      // An empty string is said as the checks after the schema say it (an app name of spaces,
      // trimmed, is "must not be empty"), not ajv's "must NOT have fewer than 1 characters".
      // A pattern whose schema words what it accepts ("a token id") says that, not the regex.
      const accepts = (e.parentSchema as Shape | undefined)?.['x-accepts'];
      const said =
        e.keyword === 'minLength' && (e.params as { limit: number }).limit === 1
          ? 'must not be empty'
          : e.keyword === 'pattern' && accepts
            ? `must be ${accepts}`
            : (e.message ?? 'is invalid');
      // A failure inside `propertyNames` is about a key of the object, which ajv names apart.
      if (e.propertyName !== undefined)
        return { message: `${where}: key ${JSON.stringify(e.propertyName)} ${said}`, param: where };
      return { message: `${where}: ${said}`, param: where };
    }
  }
}

/**
 * The errors of the one branch of `union` that takes the failing value's kind, when the value is
 * an object or an array and only one branch takes that kind (`tags: [1]` against string | array
 * | null is about `tags.0`), or, among objects told apart by a constant `type` (content parts),
 * the one whose `type` the value has (`{"type": "text", "cache_control": 1}` is about its
 * `cache_control`). Empty otherwise.
 */
function innerBranchErrors(errors: ErrorObject[], union: ErrorObject): ErrorObject[] {
  const branches = union.schema;
  const data: unknown = union.data;
  if (!Array.isArray(branches) || data === null || typeof data !== 'object') return [];
  const kind = Array.isArray(data) ? 'array' : 'object';
  let takers = (branches as Shape[]).flatMap((b, i) => (typesOf(b).includes(kind) ? [i] : []));
  if (takers.length > 1 && kind === 'object') {
    const tag = (data as { type?: unknown }).type;
    takers = takers.filter((i) => {
      const t = (branches as Shape[])[i]!.properties?.type;
      return t !== undefined && 'const' in t && t.const === tag;
    });
  }
  if (takers.length !== 1) return [];
  const prefix = `${union.schemaPath}/${takers[0]}/`;
  return errors.filter((x) => x.schemaPath.startsWith(prefix));
}

/** The JSON Schema keywords the descriptions below read. */
interface Shape {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Shape[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  properties?: Record<string, Shape>;
  required?: string[];
  /** A schema's own wording for what it accepts ("a numeric string"), for shapes no rule says well. */
  'x-accepts'?: string;
}

function typesOf(s: Shape): string[] {
  if (s.anyOf) return s.anyOf.flatMap(typesOf);
  return s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
}

/** "a, b, or c", each branch in words; undefined when some branch has no wording. */
function describeUnion(branches: Shape[]): string | undefined {
  const words: string[] = [];
  for (const b of branches) {
    const w = describeShape(b);
    if (w === undefined) return undefined;
    for (const one of w) if (!words.includes(one)) words.push(one);
  }
  if (words.length === 0) return undefined;
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')}, or ${words.at(-1)}`;
}

/** What one schema accepts, as noun phrases (several for a union or a list of types). */
function describeShape(s: Shape): string[] | undefined {
  if (s['x-accepts']) return [s['x-accepts']];
  if ('const' in s) return [JSON.stringify(s.const)];
  if (Array.isArray(s.enum)) return [`one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`];
  if (s.anyOf) {
    const all = s.anyOf.map(describeShape);
    return all.every((w) => w !== undefined) ? all.flat() : undefined;
  }
  if (Array.isArray(s.type)) {
    const all = s.type.map((t) => describeShape({ ...s, type: t }));
    return all.every((w) => w !== undefined) ? all.flat() : undefined;
  }
  switch (s.type) {
    case 'null':
      return ['null'];
    case 'boolean':
      return ['a boolean'];
    case 'integer':
      return [`an integer${range(s)}`];
    case 'number':
      return [`a number${range(s)}`];
    case 'string':
      return [
        `a string${count(s.minLength, s.maxLength, 'character')}${s.pattern ? ` matching ${s.pattern}` : ''}`,
      ];
    case 'array':
      return [`an array${count(s.minItems, s.maxItems, 'item')}`];
    case 'object': {
      // Objects told apart by a constant member (`{"type": "text", ...}`) are named by it.
      const tag = Object.entries(s.properties ?? {}).find(
        ([k, p]) => 'const' in p && s.required?.includes(k),
      );
      return [tag ? `an object with ${tag[0]} ${JSON.stringify(tag[1].const)}` : 'an object'];
    }
    default:
      return undefined;
  }
}

function range(s: Shape): string {
  const { minimum: min, maximum: max, exclusiveMinimum: above, exclusiveMaximum: below } = s;
  if (min !== undefined && max !== undefined && above === undefined && below === undefined)
    return ` from ${min} to ${max}`;
  const low = above !== undefined ? `> ${above}` : min !== undefined ? `>= ${min}` : '';
  const high = below !== undefined ? `< ${below}` : max !== undefined ? `<= ${max}` : '';
  return low && high ? ` ${low} and ${high}` : low || high ? ` ${low || high}` : '';
}

function count(min: number | undefined, max: number | undefined, unit: string): string {
  const n = (k: number) => `${k} ${unit}${k === 1 ? '' : 's'}`;
  if (min !== undefined && min > 0 && max !== undefined) return ` of ${min} to ${n(max)}`;
  if (max !== undefined) return ` of at most ${n(max)}`;
  if (min !== undefined && min > 0) return ` of at least ${n(min)}`;
  return '';
}

/**
 * Checks `body` as a route checks its JSON body (the same ajv settings, depth bound and
 * wording) and throws the 400 the route would answer. For callers outside HTTP (the CLI), so
 * that they and the admin API refuse the same values with the same messages.
 */
export function checkBody(schema: object, body: unknown): void {
  const validate = boundedDepth(strict.compile(schema), preparers.get(schema));
  if (!validate(body)) throw validationError(validate.errors ?? [], 'body');
}

export function validationError(errors: ErrorObject[], part: string | undefined) {
  const { message, param } = describeAjvError(errors, part);
  return badRequest(message, param);
}
