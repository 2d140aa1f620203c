import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { badRequest } from '../gateway/errors.js';
import { MAX_JSON_DEPTH, tooDeep } from './nesting.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Bodies are validated strictly: a wrong type is the client's mistake and gets a 400 naming the
// field. Query strings and path params are text on the wire, so those are coerced.
const strict = addFormats(
  new Ajv({
    allErrors: false,
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  }),
);
const coercing = addFormats(
  new Ajv({ allErrors: false, coerceTypes: true, useDefaults: true, removeAdditional: false, strict: false }),
);

/** Body normalizers by schema object: see `prepareBody`. */
const preparers = new WeakMap<object, (body: unknown) => void>();

/**
 * Registers `prepare` to run on a body after the depth check and before `schema` validates it,
 * inside the same validator (no extra hook on the request path). It may rewrite the body in
 * place, as ajv's own defaults do. Returns `schema` so it can wrap a schema's declaration.
 */
export function prepareBody<T extends object>(schema: T, prepare: (body: unknown) => void): T {
  preparers.set(schema, prepare);
  return schema;
}

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  if (httpPart === 'body') {
    return boundedDepth(strict.compile(schema as object), preparers.get(schema as object)) as any;
  }
  return decimalsOnly(schema as JsonSchema, coercing.compile(schema as object));
};

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
}

const INTEGER = /^-?[0-9]+$/;
const NUMBER = /^-?[0-9]+(?:\.[0-9]+)?$/;

/**
 * Ajv coerces query and path text the way JavaScript's Number() does, so `0x10`, `1e2`, `0b1`,
 * ` 1` and the empty string would be read as numbers. Numbers in a URL are plain decimals: any
 * other spelling is refused here, before ajv coerces, with the error ajv would give for a word.
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
              message: `must be ${type}`,
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
function boundedDepth(validate: ValidateFunction, prepare?: (body: unknown) => void): ValidateFunction {
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
    if (prepare) prepare(data);
    const ok = validate(data);
    check.errors = validate.errors;
    return ok;
  }) as ValidateFunction;
  return check;
}

/** One readable sentence for the first validation problem, naming the field. */
export function describeAjvError(
  errors: ErrorObject[],
  part: string | undefined,
): { message: string; param: string } {
  // A union (anyOf) failing reports every branch first; the union itself names the field best.
  const union = errors.find((x) => x.keyword === 'anyOf');
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
    case 'anyOf':
      return { message: `${where}: is not one of the accepted shapes or values`, param: where };
    case 'const':
      return {
        message: `${where}: must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`,
        param: where,
      };
    default:
      return { message: `${where}: ${e.message ?? 'is invalid'}`, param: where };
  }
}

export function validationError(errors: ErrorObject[], part: string | undefined) {
  const { message, param } = describeAjvError(errors, part);
  return badRequest(message, param);
}
