import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createApp } from './catalog-helpers.js';

let gw1: TestGateway;
let gw2: TestGateway;
let root: string;

beforeAll(async () => {
  gw1 = await startTestGateway();
  // A second instance on the same database (the same SQLite file, or the same PostgreSQL database).
  gw2 = await startTestGateway({}, { databaseUrl: gw1.databaseUrl });
  root = await gw1.login();
});
afterAll(async () => {
  await gw2?.close();
  await gw1?.close();
});

describe('POST /api/app/download/:id', () => {
  it('returns the new count and the download URL, counting each call', async () => {
    const app = await createApp(gw1, root, { name: 'Dl', download_url: 'https://example.com/dl.zip' });
    const a = await gw1.call('POST', `/api/app/download/${app.id}`);
    expect(a.status).toBe(200);
    expect(a.body).toEqual({
      success: true,
      message: '',
      data: { download_url: 'https://example.com/dl.zip', download_count: 1 },
    });
    const b = await gw2.call('POST', `/api/app/download/${app.id}`);
    expect(b.body.data.download_count).toBe(2);
    expect((await gw1.call('GET', `/api/app/${app.id}`)).body.data.download_count).toBe(2);
  });

  it('an app without download_url answers 409 and is not counted; missing and hidden are 404', async () => {
    const none = await createApp(gw1, root, { name: 'No URL' });
    const r = await gw1.call('POST', `/api/app/download/${none.id}`);
    expect(r.status).toBe(409);
    expect(r.body.success).toBe(false);
    expect(r.body.message).toContain('download_url');
    expect((await gw1.call('GET', `/api/app/${none.id}`)).body.data.download_count).toBe(0);

    expect((await gw1.call('POST', '/api/app/download/999999')).status).toBe(404);
    const hidden = await createApp(gw1, root, {
      name: 'Hidden dl',
      status: 2,
      download_url: 'https://example.com/h',
    });
    expect((await gw1.call('POST', `/api/app/download/${hidden.id}`, { cookie: root })).status).toBe(404);
    expect((await gw1.call('GET', `/api/app/${hidden.id}`, { cookie: root })).body.data.download_count).toBe(
      0,
    );
  });

  it('1,000 concurrent downloads spread over two instances add exactly 1,000', async () => {
    const app = await createApp(gw1, root, { name: 'Popular', download_url: 'https://example.com/p' });
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => (i % 2 ? gw1 : gw2).call('POST', `/api/app/download/${app.id}`)),
    );
    expect(results.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
    // Every caller saw a distinct count: no two increments read the same old value.
    const counts = new Set(results.map((r) => r.body.data.download_count));
    expect(counts.size).toBe(1000);
    expect(Math.min(...counts)).toBe(1);
    expect(Math.max(...counts)).toBe(1000);
    expect((await gw2.call('GET', `/api/app/${app.id}`)).body.data.download_count).toBe(1000);
  });
});
