import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppsRepo } from '../../src/store/apps-repo.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * 100,000 apps: the search query must be served by the trigram index (FTS5 on SQLite,
 * pg_trgm on PostgreSQL), checked through the query plan rather than timings. The measured
 * latency is printed for the record only.
 */
const N = 100_000;
let gw: TestGateway;
let expected = 0;

// A deterministic generator: the same rows on every run.
function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

beforeAll(async () => {
  gw = await startTestGateway({ catalog: { search_rate_per_minute: 0 } });
  const rand = rng(7);
  const syllables = ['ka', 'zu', 'mo', 're', 'ti', 'lan', 'vor', 'pex', 'qui', 'dro', 'ny', 'bel'];
  const word = () =>
    Array.from({ length: 3 }, () => syllables[Math.floor(rand() * syllables.length)]).join('');
  const now = Math.floor(Date.now() / 1000);
  const rows = Array.from({ length: N }, (_, i) => {
    const special = i % 1000 === 0; // 100 rows carry the rare word "quasarflux"
    if (special) expected++;
    return {
      name: `${word()} ${word()} ${i}`,
      short_description: `${word()} ${word()} ${word()}`,
      description: `${word()} ${word()} ${word()} ${word()} ${special ? 'quasarflux' : word()}`,
      category: 'general',
      version: '',
      author_url: '',
      thumbnail_url: '',
      download_url: '',
      source_url: '',
      documentation_url: '',
      tags: `${word()},${word()}`,
      author: word(),
      status: 1,
      featured: 0,
      created_time: now,
      updated_time: now,
      created_by: 0,
      updated_by: 0,
    };
  });
  const started = performance.now();
  await new AppsRepo(gw.services.database).insertMany(rows);
  if (gw.services.database.dialect === 'postgres') await sql`ANALYZE apps`.execute(gw.services.database.db);
  console.log(`inserted ${N} apps in ${Math.round(performance.now() - started)} ms`);
}, 180_000);
afterAll(async () => gw?.close());

describe(`search over ${N} apps`, () => {
  it('uses the trigram index', async () => {
    const repo = new AppsRepo(gw.services.database);
    const plan = await repo.explainSearch({ phrase: 'quasarflux', words: ['quasarflux'] }, { status: 1 });
    console.log(plan);
    if (gw.services.database.dialect === 'postgres') expect(plan).toContain('apps_search_trgm');
    else {
      expect(plan).toMatch(/apps_fts VIRTUAL TABLE INDEX 0:[LM]/);
      expect(plan).not.toMatch(/SCAN apps(?!_fts)/);
    }
  });

  it('finds every matching record, ranked and paged', async () => {
    const started = performance.now();
    const r = await gw.call('GET', '/api/app/search?keyword=QuasarFlux&page_size=10');
    const ms = performance.now() - started;
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(expected);
    expect(r.body.data).toHaveLength(10);
    const two = await gw.call(
      'GET',
      `/api/app/search?keyword=quasarflux%20${encodeURIComponent(r.body.data[0].name.split(' ')[0])}`,
    );
    expect(two.body.data.map((a: { id: number }) => a.id)).toContain(r.body.data[0].id);
    const common = await gw.call('GET', '/api/app/search?keyword=kazu&page_size=20');
    expect(common.body.total).toBeGreaterThan(1000);
    // Warm timings (the first request also pays for connection setup and JIT).
    const timed = async (q: string) => {
      const t = performance.now();
      await gw.call('GET', `/api/app/search?${q}`);
      return (performance.now() - t).toFixed(1);
    };
    await timed('keyword=warmup');
    console.log(
      `search over ${N}: rare word ${await timed('keyword=quasarflux')} ms (${r.body.total} hits, first call ${ms.toFixed(1)} ms); ` +
        `common word ${await timed('keyword=kazu')} ms (${common.body.total} hits); two words ${await timed('keyword=kazu%20vor')} ms`,
    );
  });
});
