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

/**
 * The most pages one listing reads. Gemini and Anthropic hold up to 1000 models a page, so this
 * is far past any real listing; an upstream that pages on and on (a cursor that never ends) is
 * stopped here, and the pages read are the listing.
 */
export const MAX_LISTING_PAGES = 50;

/**
 * Asks the upstream which models it serves, through the kind's adapter, following its pages
 * (Gemini's `nextPageToken`, Anthropic's `has_more`/`last_id`) up to `MAX_LISTING_PAGES`; a
 * cursor seen before ends the listing too. A failure of any page fails the whole listing, so a
 * partial one never replaces the stored one. A name listed twice is kept once (the first).
 */
export async function discoverModels(
  c: Channel,
  client: UpstreamClient,
  opts: { timeoutMs: number; limits?: Partial<BodyLimits>; signal?: CancelSignal },
): Promise<DiscoveredModel[]> {
  const adapter = getChatAdapter(c.kind);
  const listing = adapter.listModels;
  if (!listing) return [];
  const target: UpstreamTarget = {
    baseUrl: c.base_url,
    apiKey: c.keys[0] ?? '',
    upstreamModel: '',
    headers: c.settings.headers,
    extra: c.settings,
  };
  const found = new Map<string, DiscoveredModel>();
  const cursors = new Set<string>();
  let page: string | undefined;
  for (let n = 0; n < MAX_LISTING_PAGES; n++) {
    const res = await client.send(listing.request(target, page), {
      connectTimeoutMs: opts.timeoutMs,
      firstByteTimeoutMs: opts.timeoutMs,
      idleTimeoutMs: opts.timeoutMs,
      ...opts.limits,
      signal: opts.signal,
    });
    const body = await res.text();
    if (res.status < 200 || res.status >= 300) throw adapter.classifyError(res.status, body, res.headers);
    try {
      for (const m of listing.parse(body)) if (!found.has(m.name)) found.set(m.name, m);
      page = listing.nextPage?.(body);
    } catch (cause) {
      throw new UpstreamError('bad_response', 'unparseable model list', {
        upstreamStatus: res.status,
        cause,
      });
    }
    if (page === undefined || cursors.has(page)) break;
    cursors.add(page);
  }
  return [...found.values()];
}
