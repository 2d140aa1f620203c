import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  clearRequests,
  type EmbeddingGateway,
  embeddingModel,
  startEmbeddingGateway,
} from './embedding-gateway.js';

/**
 * Cohere's 499 "Request Cancelled" (its errors reference: sent when the request was cancelled on
 * Cohere's side; "try the request again") is Cohere's failure, not the client's bad request: the
 * gateway cancelled nothing (a call it aborts has no answer to read). It is retried like a 5xx,
 * and when no upstream serves the client gets a 502, not a 400 blaming its request.
 */
const CANCELLED: FakeAnswer = { status: 499, json: { id: 'c1', message: 'request cancelled' } };
const served = (texts: string[]): FakeAnswer => ({
  json: {
    id: 'e1',
    embeddings: { float: texts.map((_, i) => [i, 0.5]) },
    texts,
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: 3 } },
    response_type: 'embeddings_by_type',
  },
});

let flaky: FakeUpstream;
let down: FakeUpstream;
let g: EmbeddingGateway;
let flakyCalls = 0;

beforeAll(async () => {
  flaky = await startFakeUpstream({
    'POST /v2/embed': (r) => (++flakyCalls % 2 === 1 ? CANCELLED : served(r.json.texts)),
  });
  down = await startFakeUpstream({ 'POST /v2/embed': CANCELLED });
  const channel = (name: string, up: FakeUpstream, model: string) => ({
    name,
    kind: 'cohere',
    base_url: up.url,
    keys: [`key-${name}`],
    models: [model],
  });
  g = await startEmbeddingGateway(
    {
      channels: [channel('flaky', flaky, 'acme/flaky'), channel('down', down, 'acme/down')],
      models: [embeddingModel('acme/flaky'), embeddingModel('acme/down')],
    },
    () => [flaky, down],
  );
});
afterAll(async () => g?.close());
beforeEach(() => {
  clearRequests([flaky, down]);
  flakyCalls = 0;
});

describe("Cohere's 499", () => {
  it('is retried on the channel, and the retry serves', async () => {
    const r = await g.embed('acme/flaky', ['a', 'b']);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.map((d: { embedding: number[] }) => d.embedding)).toEqual([
      [0, 0.5],
      [1, 0.5],
    ]);
    expect(flaky.requests).toHaveLength(2);
  });

  it('from every try is a 502 upstream failure, not a 400 about the request', async () => {
    const r = await g.embed('acme/down', ['a']);
    expect(r.status, JSON.stringify(r.body)).toBe(502);
    expect(r.body.error.type).not.toBe('invalid_request_error');
    expect(down.requests).toHaveLength(2); // QUICK_RETRIES: two tries
  });
});
