import { getChatAdapter, isChatProviderKind } from '../../providers/registry.js';
import type { UpstreamTarget } from '../../providers/types.js';
import type { CancelSignal } from '../cancel.js';
import { UpstreamError } from '../errors.js';
import type { BodyLimits, UpstreamClient } from '../upstream/upstream-client.js';
import type { DiscoveredModel } from './catalog.js';
import type { Channel } from './channel.js';

/** Whether the channel's kind can list its models (the adapter has `listModels`). */
export function canDiscover(c: Channel): boolean {
  return isChatProviderKind(c.kind) && getChatAdapter(c.kind).listModels !== undefined;
}

/** Asks the upstream which models it serves, through the kind's adapter. */
export async function discoverModels(
  c: Channel,
  client: UpstreamClient,
  opts: { timeoutMs: number; limits?: Partial<BodyLimits>; signal?: CancelSignal },
): Promise<DiscoveredModel[]> {
  const adapter = getChatAdapter(c.kind);
  if (!adapter.listModels) return [];
  const target: UpstreamTarget = {
    baseUrl: c.base_url,
    apiKey: c.keys[0] ?? '',
    upstreamModel: '',
    headers: c.settings.headers,
    extra: c.settings,
  };
  const res = await client.send(adapter.listModels.request(target), {
    connectTimeoutMs: opts.timeoutMs,
    firstByteTimeoutMs: opts.timeoutMs,
    idleTimeoutMs: opts.timeoutMs,
    ...opts.limits,
    signal: opts.signal,
  });
  const body = await res.text();
  if (res.status < 200 || res.status >= 300) throw adapter.classifyError(res.status, body, res.headers);
  let names: string[];
  try {
    names = adapter.listModels.parse(body);
  } catch (cause) {
    throw new UpstreamError('bad_response', 'unparseable model list', { upstreamStatus: res.status, cause });
  }
  const facts = listingFacts(body);
  return names.map((name) => {
    const f = facts.get(name);
    return { name, contextLength: f?.contextLength, created: f?.created };
  });
}

// Adapters return names only; the context window, when a listing gives one, is read here from
// the field names servers use (vLLM `max_model_len`, llama.cpp/OpenRouter `context_length`,
// Gemini `inputTokenLimit`, Anthropic `max_input_tokens`), and `created` (Unix seconds, as
// OpenAI's listing gives it) when it is a sane positive integer. Unknown shapes just yield nothing.
const CONTEXT_FIELDS = [
  'context_length',
  'max_model_len',
  'context_window',
  'inputTokenLimit',
  'max_input_tokens',
];

/** A listed `created` later than now plus this is not believed (milliseconds, a bad clock). */
const CREATED_FUTURE_SLACK_S = 86_400;

function listingFacts(body: string): Map<string, { contextLength?: number; created?: number }> {
  const out = new Map<string, { contextLength?: number; created?: number }>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return out;
  }
  const p = parsed as { data?: unknown; models?: unknown };
  const items = Array.isArray(p.data) ? p.data : Array.isArray(p.models) ? p.models : [];
  const latest = Math.floor(Date.now() / 1000) + CREATED_FUTURE_SLACK_S;
  for (const item of items as Array<Record<string, unknown>>) {
    if (!item || typeof item !== 'object') continue;
    const raw = typeof item.id === 'string' ? item.id : typeof item.name === 'string' ? item.name : undefined;
    if (!raw) continue;
    const facts: { contextLength?: number; created?: number } = {};
    const meta = (item.meta ?? {}) as Record<string, unknown>;
    for (const f of CONTEXT_FIELDS) {
      const v = item[f] ?? meta[f === 'context_length' ? 'n_ctx_train' : f];
      if (typeof v === 'number' && Number.isInteger(v) && v > 0) {
        facts.contextLength = v;
        break;
      }
    }
    const c = item.created;
    if (typeof c === 'number' && Number.isInteger(c) && c > 0 && c <= latest) facts.created = c;
    if (facts.contextLength === undefined && facts.created === undefined) continue;
    out.set(raw, facts);
    out.set(raw.replace(/^models\//, ''), facts);
  }
  return out;
}
