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

const app = appRow;

const names = async (repo: AppsRepo, keyword: string) =>
  (await repo.search(parseKeyword(keyword), { status: 1 }, 0, 20)).rows.map((r) => r.name);

describe('migration 0008-search-fold', () => {
  it('folds the rows already stored, and the index follows later writes', async () => {
    const t = await createTestDatabase();
    const d = openDatabase(t.url);
    try {
      // The migrations released before search text was folded by the application.
      await migrateBefore(d, '0008');
      // Written as the previous version wrote them: no search columns.
      const old = [
        app('ΟΔΟΣ Navigator', { description: 'Ένας ΟΔΗΓΟΣ', tags: 'ΧΆΡΤΗΣ,maps' }),
        app('İSTANBUL ΣΟΦΙΑ', { author: 'Straße GmbH', short_description: 'ＦＵＬＬ width' }),
        app('Plain', { description: 'nothing special' }),
      ];
      for (let i = 0; i < 1200; i++) old.push(app(`Filler ${i}`, { description: `filler number ${i}` }));
      for (let i = 0; i < old.length; i += 200)
        await d.db
          .insertInto('apps')
          .values(old.slice(i, i + 200))
          .execute();

      expect(await migrateToLatest(d)).toContain('0008-search-fold');

      const stored = await d.db
        .selectFrom('apps')
        .selectAll()
        .where('id', 'in', [1, 2, 3, 1203])
        .orderBy('id')
        .execute();
      for (const r of stored) {
        expect(r.search_name).toBe(foldSearchText(r.name));
        expect(r.search_short_description).toBe(foldSearchText(r.short_description));
        expect(r.search_description).toBe(foldSearchText(r.description));
        expect(r.search_tags).toBe(foldSearchText(r.tags));
        expect(r.search_author).toBe(foldSearchText(r.author));
      }
      expect(stored[0]!.search_name).toBe('οδοσ navigator');

      const repo = new AppsRepo(d);
      expect(await names(repo, 'ΟΔΟΣ Navigator')).toEqual(['ΟΔΟΣ Navigator']);
      expect(await names(repo, 'οδηγος χαρτης')).toEqual(['ΟΔΟΣ Navigator']);
      expect(await names(repo, 'İSTANBUL ΣΟΦΙΑ')).toEqual(['İSTANBUL ΣΟΦΙΑ']);
      expect(await names(repo, 'istanbul strasse full')).toEqual(['İSTANBUL ΣΟΦΙΑ']);
      expect(await names(repo, 'filler number 1199')).toEqual(['Filler 1199']);

      // Writes after the migration keep the index in step: a rename, a partial update, a delete.
      await repo.update(1, { name: 'Λόγος' });
      expect(await names(repo, 'οδοσ')).toEqual([]);
      expect(await names(repo, 'ΛΟΓΟΣ')).toEqual(['Λόγος']);
      expect(await names(repo, 'οδηγος')).toEqual(['Λόγος']);
      await repo.update(2, { description: 'Ça marche' });
      expect(await names(repo, 'ca marche')).toEqual(['İSTANBUL ΣΟΦΙΑ']);
      expect(await names(repo, 'strasse')).toEqual(['İSTANBUL ΣΟΦΙΑ']);
      await repo.delete(2);
      expect(await names(repo, 'strasse')).toEqual([]);
      await repo.recordDownload(3, 1);
      expect(await names(repo, 'plain')).toEqual(['Plain']);

      if (d.dialect === 'sqlite')
        // The external-content index agrees with its table (throws SQLITE_CORRUPT_VTAB if not).
        await sql`INSERT INTO apps_fts(apps_fts, rank) VALUES ('integrity-check', 1)`.execute(d.db);
      else {
        const idx = await sql<{
          indexdef: string;
        }>`SELECT indexdef FROM pg_indexes WHERE indexname = 'apps_search_trgm'`.execute(d.db);
        expect(idx.rows[0]?.indexdef).toContain('search_name');
      }
    } finally {
      await d.close();
      await t.drop();
    }
  });
});
