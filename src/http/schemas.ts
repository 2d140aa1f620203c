import { Type } from 'typebox';
import { badRequest } from '../gateway/errors.js';
import { INT32_MAX } from '../store/column-bounds.js';

/** Shared route schema pieces. */

// Integers bounded by their columns (src/store/column-bounds.ts): past them PostgreSQL refused
// the statement (a 500) where SQLite stored it; now both answer a 400 naming the field.
export { INT32_MAX };
/** A row id (`serial` on PostgreSQL). */
export const RowId = Type.Integer({ minimum: 1, maximum: INT32_MAX });
/** A Unix time in seconds, up to the end of year 9999. */
export const UnixSeconds = Type.Integer({ minimum: 0, maximum: 253_402_300_799 });

/**
 * Route descriptions in the OpenAPI document (/docs): `security` names the credential, these say
 * which role it needs beyond signing in.
 */
export const ADMIN_ONLY = 'Admins only.';

export const IdParams = Type.Object({ id: RowId });

export const PageQuery = {
  p: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
};

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);

/** The most ids one `ids` query parameter takes: a page's worth (`page_size` is at most 100). */
export const MAX_IDS = 100;

/**
 * A query parameter listing row ids, `ids=3,17,42`: plain decimals from 1 to INT32_MAX separated
 * by commas, 1..MAX_IDS of them (repeats count once). Anything else is a 400 naming `field`.
 */
export function parseIdList(text: string, field: string): number[] {
  const parts = text.split(',');
  const ids = new Set<number>();
  for (const part of parts) {
    const n = /^[1-9][0-9]{0,9}$/.test(part) ? Number(part) : 0;
    if (n < 1 || n > INT32_MAX || parts.length > MAX_IDS)
      throw badRequest(
        `${field}: must be 1 to ${MAX_IDS} ids (whole numbers from 1 to ${INT32_MAX}) separated by commas`,
        field,
      );
    ids.add(n);
  }
  return [...ids];
}
