import { promises as dns, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { type AddressPolicy, createAddressPolicy } from './address-policy.js';
import { DEFAULT_IMAGE_LIMITS, ImageError } from './image-data.js';

/**
 * Fetches client-supplied image URLs without letting a client aim the gateway at its own
 * network (SSRF). The address is checked inside the socket's DNS lookup, i.e. after
 * resolution and before any connection, so a public-looking name that resolves to a private
 * address is refused without a single packet to it, and DNS rebinding between a check and the
 * connect is impossible. Redirects are followed by hand so every hop is checked the same way.
 */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface SafeFetchOptions {
  /** IPs, CIDRs, host names or `*.suffix` entries that may be fetched even if private. */
  allowList?: readonly string[];
  /** Whole fetch, redirects included. */
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** Replaceable so tests can map a public-looking name to a private address. */
  resolve?: Resolver;
  userAgent?: string;
}

export interface FetchedImage {
  bytes: Buffer;
  contentType: string | null;
  /** Final URL after redirects. */
  url: string;
}

export interface SafeFetcher {
  /** `signal`: the request's; once it fires the fetch is aborted and fails with its reason. */
  fetch(url: string, signal?: AbortSignal): Promise<FetchedImage>;
  close(): Promise<void>;
}

/** Refused, unreachable, too slow, too big or not OK: always the client's URL's fault (400). */
export class ImageFetchError extends ImageError {
  constructor(
    message: string,
    readonly refused = false,
  ) {
    super(message);
    this.name = 'ImageFetchError';
  }
}

const defaultResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export function createSafeFetcher(opts: SafeFetchOptions = {}): SafeFetcher {
  const policy = createAddressPolicy(opts.allowList ?? []);
  const resolve = opts.resolve ?? defaultResolver;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxBytes ?? DEFAULT_IMAGE_LIMITS.maxBytes;
  const maxRedirects = opts.maxRedirects ?? 3;
  const agent = new Agent({
    connect: { lookup: checkedLookup(policy, resolve), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  async function fetchImage(raw: string, cancel?: AbortSignal): Promise<FetchedImage> {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await fetchWithin(raw, cancel ? AbortSignal.any([timeout, cancel]) : timeout);
    } catch (err) {
      // The client left: its reason (a 499), not a timed-out image URL (a 400).
      if (cancel?.aborted) throw cancel.reason;
      throw err;
    }
  }

  async function fetchWithin(raw: string, signal: AbortSignal): Promise<FetchedImage> {
    let url = parseHttpUrl(raw);
    for (let hop = 0; ; hop++) {
      checkLiteralHost(url, policy);
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, {
          dispatcher: agent,
          method: 'GET',
          signal,
          headers: { accept: 'image/*', 'user-agent': opts.userAgent ?? 'modelgate-image-fetcher' },
        });
      } catch (err) {
        throw toFetchError(err, url);
      }
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        await res.body.dump().catch(() => {});
        if (hop >= maxRedirects)
          throw new ImageFetchError(`image URL redirected more than ${maxRedirects} times`);
        const location = Array.isArray(res.headers.location) ? res.headers.location[0] : res.headers.location;
        url = parseHttpUrl(resolveLocation(location, url));
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump().catch(() => {});
        throw new ImageFetchError(`image URL answered HTTP ${res.statusCode}`);
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        res.body.destroy();
        throw new ImageFetchError(`image at URL is larger than ${maxBytes} bytes`);
      }
      const bytes = await readCapped(res.body, maxBytes, url);
      const ct = res.headers['content-type'];
      return { bytes, contentType: typeof ct === 'string' ? ct : null, url: url.toString() };
    }
  }

  return { fetch: fetchImage, close: () => agent.close() };
}

/** A redirect's target; a Location no URL parser accepts is the image host's fault (400). */
function resolveLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).toString();
  } catch {
    throw new ImageFetchError('image URL redirected to an invalid URL');
  }
}

function parseHttpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ImageFetchError('image_url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ImageFetchError(
      `image_url scheme "${url.protocol.slice(0, -1)}" is not allowed (http or https only)`,
      true,
    );
  }
  if (url.username || url.password) throw new ImageFetchError('image_url must not contain credentials', true);
  return url;
}

// net.connect skips the lookup for IP literals, so those are judged here.
function checkLiteralHost(url: URL, policy: AddressPolicy): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!/^[\d.]+$/.test(host) && !host.includes(':')) return;
  const reason = policy.check(host);
  if (reason) throw new ImageFetchError(`refused to fetch image URL: ${reason}`, true);
}

function checkedLookup(policy: AddressPolicy, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = typeof options === 'object' ? options.family : undefined;
        const wanted =
          family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
        if (wanted.length === 0) return callback(new ImageFetchError(`could not resolve ${hostname}`), '', 0);
        if (!policy.hostAllowed(hostname)) {
          // Refuse if any address is internal: connecting to "the public one" would let an
          // attacker race the dual-stack fallback onto the private one.
          for (const a of wanted) {
            // Which address, and of what kind, is left out: the client would learn what the
            // gateway's names resolve to (`localhost`, `db.internal`), a map of its network. An
            // operator finds it with the same lookup on the gateway's host.
            if (policy.check(a.address)) {
              return callback(
                new ImageFetchError(
                  `refused to fetch image URL: ${hostname} resolves to a non-public address`,
                  true,
                ),
                '',
                0,
              );
            }
          }
        }
        if (typeof options === 'object' && options.all) return (callback as any)(null, wanted);
        callback(null, wanted[0].address, wanted[0].family);
      },
      (err: unknown) =>
        callback(new ImageFetchError(`could not resolve ${hostname}: ${(err as Error).message}`), '', 0),
    );
  };
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, maxBytes: number, url: URL) {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      total += chunk.length;
      if (total > maxBytes) {
        body.destroy();
        throw new ImageFetchError(`image at URL is larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    throw toFetchError(err, url);
  }
  return Buffer.concat(chunks);
}

function toFetchError(err: unknown, url: URL): ImageFetchError {
  for (let e: any = err; e; e = e.cause) if (e instanceof ImageFetchError) return e;
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || /Timeout/.test(e.code ?? '')) {
    return new ImageFetchError(`fetching image URL ${url.host} timed out`);
  }
  return new ImageFetchError(
    `could not fetch image URL ${url.host}: ${e.code ?? e.message ?? 'connection failed'}`,
  );
}
