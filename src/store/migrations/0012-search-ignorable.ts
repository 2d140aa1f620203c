import type { Kysely } from 'kysely';
import { foldSearchText } from '../search-fold.js';

/**
 * The search fold now drops default-ignorable characters (soft hyphens, zero-width spaces and
 * joiners, variation selectors): the stored `search_*` columns of the rows whose fold changes
 * are written again. Only non-ASCII text can change, so most rows are read and left alone. The
 * indexes follow on their own (SQLite's FTS triggers, PostgreSQL's GIN index).
 */
export function searchIgnorable() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      for (let after = 0; ; ) {
        const rows = await db
          .selectFrom('apps')
          .select(['id', ...FIELDS, ...COLUMNS])
          .where('id', '>', after)
          .orderBy('id')
          .limit(BATCH)
          .execute();
        if (rows.length === 0) return;
        after = Number(rows[rows.length - 1].id);
        for (const r of rows) {
          const set: Record<string, string> = {};
          for (const [i, f] of FIELDS.entries()) {
            const folded = foldSearchText(String(r[f]));
            if (folded !== r[COLUMNS[i]!]) set[COLUMNS[i]!] = folded;
          }
          if (Object.keys(set).length > 0)
            await db.updateTable('apps').set(set).where('id', '=', r.id).execute();
        }
      }
    },
  };
}

const FIELDS = ['name', 'short_description', 'description', 'tags', 'author'] as const;
const COLUMNS = FIELDS.map((f) => `search_${f}`);
const BATCH = 500;
