import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

// GET /v1/models?endpoint=: what the console's playground lists as chat models.
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  const s = await startModelListGateway({
    channels: [
      listChannel('chat', ['acme/chat-1', 'openai/text-embedding-3-small']),
      // A model unknown to the registry: blank defaults (text in, text out), yet it only embeds.
      listChannel('voyage', ['acme-embed-x'], { kind: 'voyage' }),
    ],
  });
  gw = s.gw;
  key = await s.newKey();
});
afterAll(async () => gw?.close());

const listed = async (qs: string, path = '/v1/models') => {
  const r = await gw.call('GET', `${path}${qs}`, { token: key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.data as { id: string }[]).map((m) => m.id).sort();
};

describe('GET /v1/models?endpoint=', () => {
  it('lists every servable model without it, only those served on the endpoint with it', async () => {
    expect(await listed('')).toEqual(['acme-embed-x', 'acme/chat-1', 'openai/text-embedding-3-small']);
    expect(await listed('?endpoint=chat')).toEqual(['acme/chat-1']);
    // As routing answers it: an OpenAI-compatible upstream may embed with any model it serves.
    expect(await listed('?endpoint=embeddings')).toEqual([
      'acme-embed-x',
      'acme/chat-1',
      'openai/text-embedding-3-small',
    ]);
    expect(await listed('?endpoint=chat', '/api/v1/models')).toEqual(['acme/chat-1']);
  });

  it('answers 400 for an unknown endpoint', async () => {
    const r = await gw.call('GET', '/v1/models?endpoint=images', { token: key });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('endpoint');
  });
});
