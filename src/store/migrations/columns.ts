import type { CreateTableBuilder } from 'kysely';
import type { Dialect } from '../database.js';

/** An auto-increment integer primary key in each dialect's own spelling. */
export function idColumn<T extends string>(t: CreateTableBuilder<T, never>, dialect: Dialect) {
  return dialect === 'postgres'
    ? t.addColumn('id', 'serial', (c) => c.primaryKey())
    : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
