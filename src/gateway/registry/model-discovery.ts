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
  try {
    return adapter.listModels.parse(body);
  } catch (cause) {
    throw new UpstreamError('bad_response', 'unparseable model list', { upstreamStatus: res.status, cause });
  }
}
