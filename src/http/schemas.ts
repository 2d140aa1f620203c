import { Type } from 'typebox';
import { INT32_MAX } from '../store/column-bounds.js';

/** Shared route schema pieces. */

// Integers bounded by their columns (src/store/column-bounds.ts): past them PostgreSQL refused
// the statement (a 500) where SQLite stored it; now both answer a 400 naming the field.
export { INT32_MAX };
/** A row id (`serial` on PostgreSQL). */
export const RowId = Type.Integer({ minimum: 1, maximum: INT32_MAX });
/** A Unix time in seconds, up to the end of year 9999. */
export const UnixSeconds = Type.Integer({ minimum: 0, maximum: 253_402_300_799 });

export const IdParams = Type.Object({ id: RowId });

export const PageQuery = {
  p: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
};

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);
