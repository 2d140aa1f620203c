import { getChatAdapter, isChatProviderKind } from '../../providers/registry.js';
import type { UpstreamTarget } from '../../providers/types.js';
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
  opts: { timeoutMs: number; limits?: Partial<BodyLimits> },
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
  });
  const body = await res.text();
  if (res.status < 200 || res.status >= 300) throw adapter.classifyError(res.status, body, res.headers);
  let names: string[];
  try {
    names = adapter.listModels.parse(body);
  } catch (cause) {
    throw new UpstreamError('bad_response', 'unparseable model list', { upstreamStatus: res.status, cause });
  }
  const lengths = contextLengths(body);
  return names.map((name) => ({ name, contextLength: lengths.get(name) }));
}

// Adapters return names only; the context window, when a listing gives one, is read here from
// the field names servers use (vLLM `max_model_len`, llama.cpp/OpenRouter `context_length`,
// Gemini `inputTokenLimit`, Anthropic `max_input_tokens`). Unknown shapes just yield nothing.
const CONTEXT_FIELDS = [
  'context_length',
  'max_model_len',
  'context_window',
  'inputTokenLimit',
  'max_input_tokens',
];

function contextLengths(body: string): Map<string, number> {
  const out = new Map<string, number>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return out;
  }
  const p = parsed as { data?: unknown; models?: unknown };
  const items = Array.isArray(p.data) ? p.data : Array.isArray(p.models) ? p.models : [];
  for (const item of items as Array<Record<string, unknown>>) {
    if (!item || typeof item !== 'object') continue;
    const raw = typeof item.id === 'string' ? item.id : typeof item.name === 'string' ? item.name : undefined;
    if (!raw) continue;
    const meta = (item.meta ?? {}) as Record<string, unknown>;
    for (const f of CONTEXT_FIELDS) {
      const v = item[f] ?? meta[f === 'context_length' ? 'n_ctx_train' : f];
      if (typeof v === 'number' && Number.isInteger(v) && v > 0) {
        out.set(raw, v);
        out.set(raw.replace(/^models\//, ''), v);
        break;
      }
    }
  }
  return out;
}
