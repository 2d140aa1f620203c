import type { ChatAdapter } from '../../providers/types.js';
import { UpstreamError } from '../errors.js';
import { fetchUpstreamModels } from '../upstream/call-chat.js';
import type { BodyLimits } from '../upstream/upstream-client.js';
import type { HealthTracker } from './health.js';

/** A listing's answer that means there is none to ask: not found, method not allowed, not implemented. */
const NO_LISTING: ReadonlySet<number> = new Set([404, 405, 501]);

/**
 * Upstream keys that answered 401/403 are set aside one by one (HealthTracker.keyFailed). This
 * probe asks the upstream every `intervalMs` whether such a key works again (its cheapest
 * authenticated call: the model listing) and puts it back into rotation when it does, so a
 * rotated-then-restored or temporarily suspended credential needs no restart. Off when 0.
 * A kind with no listing to ask (the embeddings-only Voyage, Jina and Cohere) has its keys put
 * back instead, so the next request that draws one tries it: a key still refused is set aside
 * again at the cost of one call a round, and one that works again is no longer lost until a
 * restart (it used to stay aside for good). So has a server whose listing is missing (404, 405,
 * 501): an OpenAI-compatible embeddings server without `/models`.
 */
export function startKeyProbe(
  health: HealthTracker,
  adapter: (kind: string) => ChatAdapter | undefined,
  opts: { intervalMs: number; timeoutMs: number; limits?: Partial<BodyLimits> },
): { stop(): void; runOnce(): Promise<number> } {
  const runOnce = async (): Promise<number> => {
    let restored = 0;
    for (const { channelId, keys, target } of health.setAside()) {
      if (!target) continue;
      const a = adapter(target.kind);
      if (!a?.listModels) {
        for (const key of keys) health.keyRestored(channelId, key);
        restored += keys.length;
        continue;
      }
      for (const key of keys) {
        try {
          await fetchUpstreamModels(
            a,
            {
              baseUrl: target.baseUrl,
              apiKey: key,
              upstreamModel: target.upstreamModel,
              extra: target.settings,
            },
            {
              connectTimeoutMs: opts.timeoutMs,
              firstByteTimeoutMs: opts.timeoutMs,
              idleTimeoutMs: opts.timeoutMs,
              ...opts.limits,
            },
          );
          health.keyRestored(channelId, key);
          restored++;
        } catch (err) {
          // No listing at that address (an embeddings-only server such as text-embeddings-inference
          // serves /v1/embeddings but no /v1/models): the answer says nothing of the key, which is
          // given back as a kind without a listing has its keys. Refused (401/403) or unreachable:
          // stays aside until the next round.
          if (err instanceof UpstreamError && NO_LISTING.has(err.upstreamStatus ?? 0)) {
            health.keyRestored(channelId, key);
            restored++;
          }
        }
      }
    }
    return restored;
  };
  if (opts.intervalMs <= 0) return { stop() {}, runOnce };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    runOnce().finally(() => {
      running = false;
    });
  }, opts.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer), runOnce };
}
