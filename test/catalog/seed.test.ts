import { describe, expect, it } from 'vitest';
import { CATEGORIES } from '../../src/catalog/app-fields.js';
import { SEED_APPS } from '../../src/catalog/seed-apps.js';
import { startTestGateway } from '../helpers/gateway.js';
import { createApp } from './catalog-helpers.js';

describe('seed data', () => {
  it('fills an empty catalog once at first start; removed examples do not come back', async () => {
    const gw = await startTestGateway({ catalog: { seed: true } });
    let second: Awaited<ReturnType<typeof startTestGateway>> | undefined;
    try {
      const list = await gw.call('GET', '/api/app?page_size=100&order=id');
      expect(list.body.total).toBe(SEED_APPS.length);
      expect(list.body.total).toBeGreaterThanOrEqual(6);
      for (const app of list.body.data) {
        expect(CATEGORIES).toContain(app.category);
        expect(app.status).toBe(1);
        for (const f of ['source_url', 'download_url', 'documentation_url', 'author_url'])
          expect(app[f], `${app.name} ${f}`).toMatch(/^https:\/\/[^/@\s]+(\/|$)/);
      }
      expect(list.body.data.map((a: { name: string }) => a.name)).toEqual(
        expect.arrayContaining(['Ollama', 'llama.cpp', 'Open WebUI']),
      );
      expect((await gw.call('GET', '/api/app/featured')).body.total).toBeGreaterThan(0);

      const root = await gw.login();
      for (const app of list.body.data)
        expect((await gw.call('DELETE', `/api/app/${app.id}`, { cookie: root })).status).toBe(200);
      await gw.stop();
      second = await startTestGateway({ catalog: { seed: true } }, { databaseUrl: gw.databaseUrl });
      expect((await second.call('GET', '/api/app')).body.total).toBe(0);
    } finally {
      await second?.stop();
      await gw.close();
    }
  });

  it('does not seed a catalog that already has apps', async () => {
    const gw = await startTestGateway();
    let second: Awaited<ReturnType<typeof startTestGateway>> | undefined;
    try {
      await createApp(gw, await gw.login(), { name: 'Mine' });
      second = await startTestGateway({ catalog: { seed: true } }, { databaseUrl: gw.databaseUrl });
      const list = await second.call('GET', '/api/app');
      expect(list.body.data.map((a: { name: string }) => a.name)).toEqual(['Mine']);
    } finally {
      await second?.stop();
      await gw.close();
    }
  });

  it('seeds exactly once when several instances start together on one database', async () => {
    const first = await startTestGateway(); // creates and migrates the database, no seed
    const more: Awaited<ReturnType<typeof startTestGateway>>[] = [];
    try {
      more.push(
        ...(await Promise.all(
          [1, 2, 3].map(() =>
            startTestGateway({ catalog: { seed: true } }, { databaseUrl: first.databaseUrl }),
          ),
        )),
      );
      expect((await first.call('GET', '/api/app')).body.total).toBe(SEED_APPS.length);
    } finally {
      for (const g of more) await g.stop();
      await first.close();
    }
  });
});
