import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  clearRequests,
  type EmbeddingGateway,
  embeddingModel,
  ROUTE,
  sizes,
  startEmbeddingGateway,
  teiChannel,
  texts,
  vectors as vectorsOf,
} from './embedding-gateway.js';

/**
 * text-embeddings-inference answers every validation error with a 413 (docs/embeddings.md,
 * "Upstream errors"): `{"error": "...", "error_type": "Validation"}`, on its OpenAI route
 * `{"message": "...", "code": 413, "type": "validation"}`. Only two of them are about size: its
 * batch cap (upstream-batch-cap.test.ts) and an input longer than the model takes. The others say
 * the request is wrong (an empty input, a bad `dimensions`, an unknown prompt name): the client
 * gets a 400 `invalid_request_error` carrying TEI's words, as for any upstream 400, and the model's
 * other channels are not tried (docs/routing.md: a 400 is the model's). Channel `tei` (priority
 * 10) answers as each test sets; channel `other` serves the same model.
 */
const MODEL = 'tei/bge-m3';

let tei: FakeUpstream;
let other: FakeUpstream;
let g: EmbeddingGateway;

/** One vector per input, 2 tokens an input. */
const vectors = vectorsOf(2);

beforeAll(async () => {
  tei = await startFakeUpstream();
  other = await startFakeUpstream({ [ROUTE]: vectors });
  g = await startEmbeddingGateway(
    {
      channels: [teiChannel('tei', tei, MODEL, 10), teiChannel('other', other, MODEL, 0)],
      models: [embeddingModel(MODEL)],
    },
    () => [tei, other],
  );
});
afterAll(() => g?.close());
beforeEach(() => clearRequests([tei, other]));

const embed = (input: string[], extra: Record<string, unknown> = {}) =>
  g.embed(MODEL, input, { body: extra });

/** TEI's native error body, and the one of its OpenAI route (`/v1/embeddings`), for one message. */
const native = (error: string) => ({ error, error_type: 'Validation' });
const openaiRoute = (message: string) => ({ message, code: 413, type: 'validation' });

describe("TEI's validation 413s that are not about size", () => {
  it.each([
    // core/src/tokenization.rs: an input that is an empty string (TEI before its `Empty` type).
    [
      'an empty input',
      native('Input validation error: `inputs` cannot be empty'),
      '`inputs` cannot be empty',
    ],
    [
      // The prompt TEI was told to prepend (`--default-prompt-name`, or a `prompt_name`) is not
      // in the model's Sentence Transformers configuration.
      'an unknown prompt name',
      native(
        'Input validation error: `default-prompt-name` is set to `passage` but it was not found in the Sentence Transformers prompts. Available prompts: ["query"]',
      ),
      'it was not found in the Sentence Transformers prompts',
    ],
    [
      'a bad dimensions, on the OpenAI route',
      openaiRoute('Input validation error: `dimensions` must be at most 1024, the size of the model'),
      '`dimensions` must be at most 1024',
    ],
  ])(
    '%s: the client gets a 400 naming it; not halved, not retried, no other channel',
    async (_, json, says) => {
      tei.on(ROUTE, { status: 413, json });
      const r = await embed(texts(6), { dimensions: 4096 });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({
        code: 400,
        type: 'invalid_request_error',
        metadata: { upstream_kind: 'bad_request', upstream_status: 413 },
      });
      expect(r.body.error.message).toContain(says);
      expect(r.body.error.message).not.toMatch(/too large/);
      expect(sizes(tei)).toEqual([6]);
      expect(sizes(other)).toEqual([]);
    },
  );

  it('the multimodal endpoint answers it the same way, with the Voyage `detail`', async () => {
    // That route forwards an empty text part (docs/embeddings.md, "Empty text"); TEI refuses it.
    tei.on(ROUTE, { status: 413, json: native('Input validation error: `inputs` cannot be empty') });
    const r = await g.gw.call('POST', '/v1/multimodalembeddings', {
      token: g.key,
      body: { model: MODEL, inputs: [{ content: [{ type: 'text', text: '' }] }] },
    });
    expect(r.status).toBe(400);
    expect(r.body.detail).toContain('`inputs` cannot be empty');
    expect(r.body.error).toMatchObject({ code: 400, type: 'invalid_request_error' });
    expect(sizes(other)).toEqual([]);
  });
});

describe("TEI's validation 413s about size", () => {
  it.each([
    ['tokens', 'Input validation error: `inputs` must have less than 512 tokens. Given: 600'],
    // Checked before tokenizing, when truncation is off: 250 characters a token.
    ['characters', 'Input validation error: `inputs` must have less than 128000 characters. Given: 200000'],
  ])('an input over the model’s length in %s is the client’s 400 naming input', async (_, message) => {
    for (const json of [native(message), openaiRoute(message)]) {
      tei.requests.length = 0;
      tei.on(ROUTE, { status: 413, json });
      const r = await embed(texts(3));
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({
        code: 400,
        param: 'input',
        metadata: { upstream_kind: 'context_length', upstream_status: 413 },
      });
      expect(r.body.error.message).toContain(message.slice('Input validation error: '.length));
      expect(sizes(tei)).toEqual([3]);
      expect(sizes(other)).toEqual([]);
    }
  });

  it('its batch cap is still split to, on the same upstream', async () => {
    tei.on(ROUTE, (r) =>
      (r.json.input as string[]).length > 4
        ? {
            status: 413,
            json: openaiRoute(`batch size ${r.json.input.length} > maximum allowed batch size 4`),
          }
        : vectors(r),
    );
    const r = await embed(texts(6));
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(6);
    expect(sizes(tei)).toEqual([6, 4, 2]);
    expect(sizes(other)).toEqual([]);
  });
});
