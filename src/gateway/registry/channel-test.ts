import { getEmbeddingAdapter } from '../../providers/embedding-registry.js';
import { getChatAdapter, isChatProviderKind } from '../../providers/registry.js';
import { embedWithAdapter } from '../embeddings/embed-with-adapter.js';
import { UpstreamError, type UpstreamErrorKind } from '../errors.js';
import { completeChat } from '../upstream/call-chat.js';
import type { BodyLimits, UpstreamClient } from '../upstream/upstream-client.js';
import { type Channel, explainChannelFailure } from './channel.js';
import { isEmbeddingModel, type ModelInfo } from './model-info.js';

export interface ChannelTestResult {
  success: boolean;
  latency_ms: number;
  /** The model id tried (the registry's). */
  model: string;
  /** The name the upstream was sent for it (after the channel's model_mapping). */
  upstream_model: string;
  /** The call tried: a one-word chat, or one short text to embed. */
  endpoint: 'chat' | 'embeddings';
  /** The upstream's HTTP status on a failure it answered; null on success or when it never answered. */
  upstream_status: number | null;
  /**
   * What kind of failure (auth, not_found, connection, timeout...: the gateway's upstream error
   * kinds); null on success, or when the channel cannot make the call at all.
   */
  error_kind: UpstreamErrorKind | null;
  /** The answer's first words on success; on failure, where it failed and the upstream's message. */
  message: string;
}

/**
 * Sends the smallest useful request (a 1-word chat, or one short text to embed) with the
 * channel's first key, so an admin sees at once whether address, key and model name work.
 */
export async function testChannel(
  c: Channel,
  model: ModelInfo,
  upstreamModel: string,
  client: UpstreamClient,
  opts: { timeoutMs: number; limits?: Partial<BodyLimits> },
): Promise<ChannelTestResult> {
  const target = {
    baseUrl: c.base_url,
    apiKey: c.keys[0] ?? '',
    upstreamModel,
    headers: c.settings.headers,
    extra: c.settings,
  };
  const { timeoutMs } = opts;
  const timeouts = {
    connectTimeoutMs: timeoutMs,
    firstByteTimeoutMs: timeoutMs,
    idleTimeoutMs: timeoutMs,
    ...opts.limits,
  };
  const started = performance.now();
  const embeds = isEmbeddingModel(model) || !isChatProviderKind(c.kind);
  const done = (success: boolean, message: string, err?: UpstreamError): ChannelTestResult => ({
    success,
    latency_ms: Math.round(performance.now() - started),
    model: model.id,
    upstream_model: upstreamModel,
    endpoint: embeds ? 'embeddings' : 'chat',
    upstream_status: err?.upstreamStatus ?? null,
    error_kind: err?.kind ?? null,
    message,
  });
  try {
    const embeddings = getEmbeddingAdapter(c.kind, upstreamModel);
    if (embeds) {
      if (!embeddings) return done(false, `a ${c.kind} channel cannot embed`);
      const r = await embedWithAdapter(
        embeddings,
        {
          model: upstreamModel,
          inputs: [[{ type: 'text', text: 'ping' }]],
          inputType: null,
          truncation: true,
          encoding: 'float',
          dimensions: null,
          dtype: null,
          user: null,
        },
        target,
        (req, o) => client.send(req, { ...timeouts, ...o }),
      );
      return done(true, `embedding of ${r.vectors[0]?.length ?? 0} dimensions`);
    }
    const r = await completeChat(
      getChatAdapter(c.kind),
      { model: upstreamModel, messages: [{ role: 'user', content: 'Say "ok".' }], max_tokens: 16 },
      target,
      { client, ...timeouts },
    );
    const text = r.choices[0]?.message?.content;
    return done(true, typeof text === 'string' ? text.slice(0, 200) : 'ok');
  } catch (err) {
    return done(false, explainChannelFailure(c, err), err instanceof UpstreamError ? err : undefined);
  }
}
