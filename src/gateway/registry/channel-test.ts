import { getEmbeddingAdapter } from '../../providers/embedding-registry.js';
import { getChatAdapter, isChatProviderKind } from '../../providers/registry.js';
import { embedWithAdapter } from '../embeddings/embed-with-adapter.js';
import { completeChat } from '../upstream/call-chat.js';
import type { BodyLimits, UpstreamClient } from '../upstream/upstream-client.js';
import { type Channel, explainChannelFailure } from './channel.js';
import { isEmbeddingModel, type ModelInfo } from './model-info.js';

export interface ChannelTestResult {
  success: boolean;
  latency_ms: number;
  model: string;
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
  const done = (success: boolean, message: string): ChannelTestResult => ({
    success,
    latency_ms: Math.round(performance.now() - started),
    model: model.id,
    message,
  });
  try {
    const embeddings = getEmbeddingAdapter(c.kind, upstreamModel);
    if (isEmbeddingModel(model) || !isChatProviderKind(c.kind)) {
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
    return done(false, explainChannelFailure(c, err));
  }
}
