import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_TAGS } from '../../src/http/app.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

let gw: TestGateway;
let doc: any;

beforeAll(async () => {
  gw = await startTestGateway({}, { redis: false });
  doc = (await gw.call('GET', '/openapi.json')).body;
});
afterAll(async () => gw?.close());

/** Every operation of the served document, as `METHOD path` with its object. */
function operations(): [string, any][] {
  const out: [string, any][] = [];
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const method of METHODS)
      if (item[method]) out.push([`${method.toUpperCase()} ${path}`, item[method]]);
  return out;
}

describe('OpenAPI document (/docs)', () => {
  it('lists the public surfaces', () => {
    const ops = operations().map(([name]) => name);
    // Enough to be sure the walk below sees the whole document, not an empty one.
    expect(ops.length).toBeGreaterThan(40);
    expect(ops).toContain('POST /v1/chat/completions');
    expect(ops).toContain('POST /v1/responses');
    expect(ops).toContain('POST /v1/multimodalembeddings');
    expect(ops).toContain('GET /api/app');
    expect(ops).toContain('GET /api/channel/health');
  });

  it('gives every operation a one-line summary', () => {
    const missing = operations()
      .filter(([, op]) => typeof op.summary !== 'string' || !op.summary.trim())
      .map(([name]) => name);
    expect(missing).toEqual([]);
    const long = operations()
      .filter(([, op]) => /\n/.test(op.summary ?? '') || (op.summary ?? '').length > 100)
      .map(([name, op]) => `${name}: ${op.summary}`);
    expect(long).toEqual([]);
  });

  it('puts every operation in a declared group', () => {
    const declared = new Set(OPENAPI_TAGS.map((t) => t.name));
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual([...declared]);
    const ungrouped = operations()
      .filter(([, op]) => !Array.isArray(op.tags) || op.tags.length === 0)
      .map(([name]) => name);
    expect(ungrouped).toEqual([]);
    const undeclared = operations().flatMap(([name, op]) =>
      (op.tags ?? []).filter((t: string) => !declared.has(t)).map((t: string) => `${name}: ${t}`),
    );
    expect(undeclared).toEqual([]);
    // Each declared group is used (a renamed tag would leave an empty group in /docs).
    const used = new Set(operations().flatMap(([, op]) => op.tags ?? []));
    expect([...declared].filter((t) => !used.has(t))).toEqual([]);
  });

  it('keeps hidden routes out (aliases under /api/v1, probes, metrics)', () => {
    const paths = Object.keys(doc.paths);
    for (const hidden of [
      '/api/v1/chat/completions',
      '/api/v1/responses',
      '/api/v1/models',
      '/healthz',
      '/readyz',
      '/metrics',
    ])
      expect(paths).not.toContain(hidden);
  });
});
