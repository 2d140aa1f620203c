import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { badRequest } from '../gateway/errors.js';

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

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : coercing;
  return ajv.compile(schema as object) as any;
};

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
