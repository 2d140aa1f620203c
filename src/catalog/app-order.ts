import { badRequest } from '../gateway/errors.js';

export const ORDER_FIELDS = ['id', 'name', 'download_count', 'created_time', 'updated_time'] as const;
export type OrderField = (typeof ORDER_FIELDS)[number];

export interface AppOrder {
  field: OrderField;
  direction: 'asc' | 'desc';
}

export const DEFAULT_ORDER: AppOrder = { field: 'created_time', direction: 'desc' };

/**
 * `"<field>"` or `"<field> <asc|desc>"`. The separator is a space; a literal `+` is accepted
 * too because some clients do not form-decode `+` in query strings. A field alone sorts
 * ascending, except the default.
 */
export function parseOrder(value: string | undefined): AppOrder {
  if (value === undefined || value.trim() === '') return DEFAULT_ORDER;
  const parts = value.trim().split(/[\s+]+/);
  const [field, direction, ...rest] = parts;
  if (!ORDER_FIELDS.includes(field as OrderField))
    throw badRequest(`order: unknown field "${field}"; use one of ${ORDER_FIELDS.join(', ')}`, 'order');
  if (rest.length > 0) throw badRequest('order: expected "<field>" or "<field> <asc|desc>"', 'order');
  if (direction === undefined) return { field: field as OrderField, direction: 'asc' };
  const dir = direction.toLowerCase();
  if (dir !== 'asc' && dir !== 'desc')
    throw badRequest(`order: direction must be asc or desc, not "${direction}"`, 'order');
  return { field: field as OrderField, direction: dir };
}
