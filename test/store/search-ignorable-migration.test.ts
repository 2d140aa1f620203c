import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { parseKeyword } from '../../src/catalog/search-keyword.js';
import { AppsRepo } from '../../src/store/apps-repo.js';
import { openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { foldSearchText } from '../../src/store/search-fold.js';
import { appRow } from '../helpers/app-row.js';
import { createTestDatabase } from '../helpers/databases.js';
import { migrateBefore } from '../helpers/migrations.js';

const names = async (repo: AppsRepo, keyword: string) =>
  (await repo.search(parseKeyword(keyword), { status: 1 }, 0, 20)).rows.map((r) => r.name);

describe('migration 0012-search-ignorable', () => {
  it('folds again the rows whose stored search text kept invisible characters', async () => {
    const t = await createTestDatabase();
    const d = openDatabase(t.url);
    try {
      await migrateBefore(d, '0012');
      // As the previous fold stored them: soft hyphens and zero-width joiners kept.
      const oldFold = (s: string) => s.toLowerCase();
      const rows = [
        appRow('Prose', { description: 'hyphen\u00ADated prose' }),
        appRow('Family 👨\u200D👩\u200D👧', { tags: 'emoji' }),
        appRow('Plain', { description: 'nothing special' }),
      ].map((r) => ({
        ...r,
        search_name: oldFold(r.name),
        search_short_description: '',
        search_description: oldFold(r.description),
        search_tags: oldFold(r.tags),
        search_author: '',
      }));
      await d.db.insertInto('apps').values(rows).execute();
      const repo = new AppsRepo(d);
      expect(await names(repo, 'hyphenated')).toEqual([]);

      expect(await migrateToLatest(d)).toContain('0012-search-ignorable');

      const stored = await d.db.selectFrom('apps').selectAll().orderBy('id').execute();
      for (const r of stored) {
        expect(r.search_name).toBe(foldSearchText(r.name));
        expect(r.search_description).toBe(foldSearchText(r.description));
      }
      expect(await names(repo, 'hyphenated')).toEqual(['Prose']);
      expect(await names(repo, 'family 👨👩👧')).toEqual(['Family 👨\u200D👩\u200D👧']);
      expect(await names(repo, 'nothing')).toEqual(['Plain']);
      if (d.dialect === 'sqlite')
        // The external-content index agrees with its table (throws SQLITE_CORRUPT_VTAB if not).
        await sql`INSERT INTO apps_fts(apps_fts, rank) VALUES ('integrity-check', 1)`.execute(d.db);
    } finally {
      await d.close();
      await t.drop();
    }
  });
});
