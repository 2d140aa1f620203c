import { type EmbedOptions, embedWithAdapter } from '../../src/gateway/embeddings/embed-with-adapter.js';
import { UpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import { openaiEmbeddingAdapter } from '../../src/providers/openai-embeddings/openai-embedding-adapter.js';
import { textRequest } from '../helpers/embedding-requests.js';
import {
  type FakeAnswer,
  type FakeHandler,
  type FakeUpstream,
  type ReceivedRequest,
  startFakeUpstream,
} from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * What the tests of an embeddings upstream's limits share (upstream-413-halving, upstream-batch-cap,
 * upstream-tei-validation, retry-served-slices): OpenAI-compatible upstreams on loopback that
 * answer as text-embeddings-inference does, a gateway routing models to them, and a key.
 */
export const ROUTE = 'POST /v1/embeddings';

/** `t0`, `t1`, ...: inputs whose vector says which they were (`vectors`). */
export const texts = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

/** The number of inputs of each call `up` received, in order. */
export const sizes = (up: FakeUpstream) => up.requests.map((r) => (r.json.input as string[]).length);

/** The first value of each vector of an answer: the `i` of the input `t<i>` it embeds. */
export const firsts = (r: { body: { data: { embedding: number[] }[] } }) =>
  r.body.data.map((d) => d.embedding[0]);

/**
 * An OpenAI-compatible answer: each input `t<i>` (spaces after it allowed) embeds as `[i, 0.5]`
 * (any other text as its index in the call), so order is checkable; usage `perInput` tokens an input.
 */
export const vectors =
  (perInput = 2) =>
  (r: ReceivedRequest): FakeAnswer => {
    const input = r.json.input as string[];
    return {
      json: {
        object: 'list',
        data: input.map((text, index) => ({
          object: 'embedding',
          index,
          embedding: [numberOf(text) ?? index, 0.5],
        })),
        model: r.json.model,
        usage: { prompt_tokens: perInput * input.length, total_tokens: perInput * input.length },
      },
    };
  };

/** The `i` of a text `t<i>` (padding after it allowed), else undefined. */
function numberOf(text: string): number | undefined {
  const n = Number(text.slice(1));
  return text.startsWith('t') && text.length > 1 && Number.isInteger(n) ? n : undefined;
}

/** TEI's `--payload-limit` refusal (its axum layer): a 413 in plain text that states no cap. */
export const AXUM_413: FakeAnswer = {
  status: 413,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
  body: 'Failed to buffer the request body: length limit exceeded',
};

/** Refuses more than `max` inputs with a cap-less 413, else answers with `then`. */
export const limited =
  (max: number, then: (r: ReceivedRequest) => FakeAnswer | Promise<FakeAnswer>) =>
  (r: ReceivedRequest): FakeAnswer | Promise<FakeAnswer> =>
    (r.json.input as string[]).length > max ? AXUM_413 : then(r);

/** Refuses a body over `limit` bytes with a cap-less 413 (TEI's `--payload-limit`), else serves. */
export const bodyLimited =
  (limit: number) =>
  (r: ReceivedRequest): FakeAnswer =>
    Buffer.byteLength(r.body) > limit ? AXUM_413 : vectors()(r);

/** An `openai-compatible` channel on a bare host, as TEI is usually configured. */
export const teiChannel = (name: string, up: FakeUpstream, models: string | string[], priority = 0) => ({
  name,
  kind: 'openai-compatible',
  base_url: up.url,
  keys: [`key-${name}`],
  models: typeof models === 'string' ? [models] : models,
  priority,
});

/** A registry entry for an embedding model at 1 micro-USD a token. */
export const embeddingModel = (id: string) => ({
  id,
  pricing: { prompt: '0.000001' },
  output_modalities: ['embeddings'],
});

/** Two tries of a channel and next to no backoff, so retries are quick. */
export const QUICK_RETRIES = { discover_models: false, max_attempts: 2, retry_base_ms: 1, retry_max_ms: 2 };

export interface EmbeddingGateway {
  gw: TestGateway;
  /** root's session. */
  cookie: string;
  /** An API key without a quota. */
  key: string;
  /** `POST /v1/embeddings` of `input` to `model` (float vectors), with `key` unless told. */
  embed(
    model: string,
    input: string[],
    opts?: { token?: string; body?: Record<string, unknown> },
  ): ReturnType<TestGateway['call']>;
  /** A new API key with a quota of 1 USD, for a test that reads its own billing. */
  newKey(name: string): Promise<{ id: number; key: string }>;
  /** The key's request logs and spend, once written. */
  billing(keyId: number): Promise<{ rows: any[]; used: number }>;
  /** Stops the gateway and the upstreams given. */
  close(): Promise<void>;
}

/** A gateway with `config` (QUICK_RETRIES under its `gateway`), signed in, with a key. */
export async function startEmbeddingGateway(
  config: { gateway?: Record<string, unknown>; channels: unknown[]; models: unknown[] },
  upstreams: () => (FakeUpstream | undefined)[] = () => [],
): Promise<EmbeddingGateway> {
  const gw = await startTestGateway({ ...config, gateway: { ...QUICK_RETRIES, ...config.gateway } });
  const cookie = await gw.login();
  const key = (await gw.call('POST', '/api/key', { cookie, body: { name: 'emb' } })).body.data.key as string;
  return {
    gw,
    cookie,
    key,
    embed: (model, input, opts = {}) =>
      gw.call('POST', '/v1/embeddings', {
        token: opts.token ?? key,
        body: { model, input, encoding_format: 'float', ...opts.body },
      }),
    newKey: async (name) =>
      (await gw.call('POST', '/api/key', { cookie, body: { name, quota_limit: 1 } })).body.data,
    async billing(keyId) {
      await gw.services.requestLogs.flush();
      const { rows } = await gw.services.repos.logs.list({ keyId }, 0, 10);
      const row = await gw.services.repos.apiKeys.byId(keyId);
      return { rows, used: row!.quota_used_micros };
    },
    async close() {
      await gw.close();
      for (const up of upstreams()) await up?.close();
    },
  };
}

/** Forgets what each upstream received, for the next test. */
export function clearRequests(upstreams: (FakeUpstream | undefined)[]): void {
  for (const up of upstreams) if (up) up.requests.length = 0;
}

/**
 * One `embedWithAdapter` attempt of the OpenAI-compatible adapter against a fake upstream
 * answering `handler`, with its own HTTP client: what it returned (or threw), the caps it
 * reported (`onBatchCap`), the body sizes (`onBodyLimit`) and the calls the upstream received. `use` runs before the upstream
 * stops, for a test that waits for calls still in flight.
 */
export async function embedDirect(
  handler: FakeHandler,
  input: string[],
  opts: Omit<EmbedOptions, 'onBatchCap' | 'onBodyLimit'> = {},
  use?: (up: FakeUpstream) => Promise<void>,
) {
  const up = await startFakeUpstream({ [ROUTE]: handler });
  const client = new UpstreamClient();
  const learned: number[] = [];
  const bodies: number[] = [];
  try {
    const out = await embedWithAdapter(
      openaiEmbeddingAdapter,
      textRequest(input),
      { baseUrl: up.url, upstreamModel: 'bge' },
      (req, o) => client.send(req, o),
      { ...opts, onBatchCap: (n) => learned.push(n), onBodyLimit: (n) => bodies.push(n) },
    ).catch((e: unknown) => e);
    await use?.(up);
    return { out, learned, bodies, up };
  } finally {
    await client.close();
    await up.close();
  }
}

/**
 * A gateway in front of TEI-like fakes, one a channel named by its key, each the only server of its
 * model and answering with its handler: `{ capped: [MODEL, cap32(vectors())] }`. Closing the
 * gateway closes them.
 */
export async function startTeiGateway<K extends string>(
  served: Record<K, readonly [model: string, answer: FakeHandler]>,
): Promise<{ g: EmbeddingGateway; ups: Record<K, FakeUpstream> }> {
  const names = Object.keys(served) as K[];
  const ups = {} as Record<K, FakeUpstream>;
  const closeUps = async () => {
    for (const up of Object.values<FakeUpstream>(ups)) await up.close();
  };
  try {
    for (const name of names) ups[name] = await startFakeUpstream({ [ROUTE]: served[name][1] });
    const g = await startEmbeddingGateway(
      {
        channels: names.map((name) => teiChannel(name, ups[name], served[name][0])),
        models: names.map((name) => embeddingModel(served[name][0])),
      },
      () => Object.values(ups),
    );
    return { g, ups };
  } catch (err) {
    await closeUps();
    throw err;
  }
}
