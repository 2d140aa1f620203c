import { abortedKind, type CancelSignal } from '../cancel.js';
import { GatewayError, UnfitCandidate, UpstreamError } from '../errors.js';
import { KeyTree } from '../key-tree.js';
import { redactUpstreamError } from '../upstream/redact-credentials.js';
import type { HealthTracker } from './health.js';
import type { AttemptRecord, Candidate } from './types.js';

export interface ExecuteOptions {
  health: HealthTracker;
  /** Tries of one candidate on retryable failures (1 = no retry). */
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Upper bound on tries across all candidates, so a long fallback list cannot run for ever. */
  maxTotalAttempts?: number;
  signal?: CancelSignal;
  sleep?: (ms: number, signal?: CancelSignal) => Promise<void>;
  random?: () => number;
}

export interface Executed<T> {
  value: T;
  candidate: Candidate;
  apiKey: string;
  attempts: AttemptRecord[];
  startedAt: number;
  /** The candidate was the half-open circuit's probe: pass it to `success`/`failure`/`release`. */
  probe: boolean;
}

/** Failure kinds that say something about the upstream's health (not about the request). */
const HEALTH_KINDS = new Set(['server_error', 'overloaded', 'timeout', 'connection', 'bad_response']);

/** Whether a failure of this kind should count against the upstream's circuit. */
export const countsAgainstHealth = (kind: string): boolean => HEALTH_KINDS.has(kind);

/** The attempt trail of a request that failed, keyed by the error `executeRoute` threw. */
const trails = new WeakMap<object, AttemptRecord[]>();

/** The attempts made before `err` was thrown by `executeRoute` (undefined for other errors). */
export function attemptsOf(err: unknown): AttemptRecord[] | undefined {
  return typeof err === 'object' && err !== null ? trails.get(err) : undefined;
}

/**
 * Makes `err` carry `attempts` as if `executeRoute` had thrown it: for a caller that turns the
 * error it got into another one (embeddings' client errors), so the route still finds the trail.
 */
export function keepAttempts(err: unknown, attempts: AttemptRecord[]): void {
  if (typeof err === 'object' && err !== null) trails.set(err, attempts);
}

/**
 * Each channel's next first key: a request's tries walk the channel's keys from there, so keys
 * are used in turn across requests and a retry goes to the next key (one per channel id, per
 * process).
 */
const keyTurns = new Map<number, number>();
function nextKeyTurn(channelId: number): number {
  const turn = keyTurns.get(channelId) ?? 0;
  keyTurns.set(channelId, (turn + 1) & 0x3fffffff);
  return turn;
}

/** One try of `t` begun at `started`, for the trail: a success, or failed with `errorKind`. */
function tried(
  t: Candidate['target'],
  started: number,
  errorKind?: string,
  upstreamStatus?: number,
): AttemptRecord {
  const ms = Date.now() - started;
  const { modelId: model, channelName: provider, channelId: channel_id } = t;
  return errorKind === undefined
    ? { model, provider, channel_id, ok: true, ms }
    : { model, provider, channel_id, ok: false, error_kind: errorKind, upstream_status: upstreamStatus, ms };
}

/**
 * The one place where retries and fallbacks happen. Tries candidates in order; retries a
 * candidate with exponential backoff and full jitter on retryable failures (a 429 waits its
 * Retry-After when that is short, otherwise moves on); rotates keys on auth failures; moves to
 * the next model on failures another model may not have (context length, a 400, a content
 * filter, a prompt that does not fit it: `UnfitCandidate`; one an upstream's adapter refuses to
 * build skips that upstream only). `attempt` must not have
 * written anything to the client when it throws: callers commit to a candidate only after it
 * returned.
 */
export async function executeRoute<T>(
  candidates: Candidate[],
  attempt: (c: Candidate, apiKey: string, signal: CancelSignal | undefined) => Promise<T>,
  opts: ExecuteOptions,
  /** The request's signal, when `opts` is shared by all requests (overrides `opts.signal`). */
  signal: CancelSignal | undefined = opts.signal,
): Promise<Executed<T>> {
  const attempts: AttemptRecord[] = [];
  try {
    const sleep = opts.sleep ?? abortableSleep;
    const random = opts.random ?? Math.random;
    const maxTotal = opts.maxTotalAttempts ?? 10;
    let lastError: UpstreamError | GatewayError | undefined;
    /** Returned only when no candidate could take the request: any other failure says more. */
    let unfit: UnfitCandidate | undefined;
    let skipModel: string | undefined;
    /** A content filter's refusal: the answer when no later model serves (it says why). */
    let filtered: UpstreamError | undefined;

    for (const c of candidates) {
      const t = c.target;
      if (t.modelId === skipModel) continue;
      const admission = opts.health.tryAcquire(c.healthKey);
      if (admission === null) {
        lastError ??= new GatewayError(503, `upstream ${t.channelName} is unavailable (circuit open)`);
        continue;
      }
      const probe = admission === 'probe';
      let acquired = true;
      const turn = t.keys.length > 1 ? nextKeyTurn(t.channelId) : 0;
      try {
        for (let i = 0; i < opts.maxAttempts; i++) {
          const keys = opts.health.usableKeys(t.channelId, t.keys, t);
          if (keys.length === 0) {
            lastError = new UpstreamError('auth', `every key of upstream ${t.channelName} was rejected`);
            break;
          }
          if (attempts.length >= maxTotal) throw finalError(filtered ?? lastError ?? unfit);
          if (signal?.aborted) throw signal.reason;
          const apiKey = keys[(turn + i) % keys.length]!;
          const started = Date.now();
          try {
            const value = await attempt(c, apiKey, signal);
            attempts.push(tried(t, started));
            acquired = false; // the caller reports success/failure of the committed attempt
            return { value, candidate: c, apiKey, attempts, startedAt: started, probe };
          } catch (err) {
            if (signal?.aborted) {
              // The try in flight ended with the request: the trail keeps it, saying why and when.
              attempts.push(tried(t, started, abortedKind(signal)));
              throw signal.reason ?? err;
            }
            if (err instanceof UnfitCandidate) {
              // Nothing was sent, so it is no try. The model's other upstreams share its context,
              // but not this upstream's kind: one an adapter refused leaves them to be tried.
              unfit = err;
              if (err.scope === 'model') skipModel = t.modelId;
              break;
            }
            if (!(err instanceof UpstreamError)) throw err;
            // The upstream's words reach the client: not the credentials it may say back.
            redactUpstreamError(err, t);
            lastError = err;
            attempts.push(tried(t, started, err.kind, err.upstreamStatus));
            if (HEALTH_KINDS.has(err.kind)) opts.health.failure(c.healthKey, err.kind, probe);
            if (err.kind === 'auth') {
              opts.health.keyFailed(t.channelId, apiKey, t);
              i--; // another key of the same upstream is not a retry
              continue;
            }
            // A filter, like a 400, is this model's (its other upstreams run the same moderation):
            // the next model in `models` is tried, as decisions.md and OpenRouter do.
            if (err.kind === 'content_filter') filtered ??= err;
            if (
              err.kind === 'context_length' ||
              err.kind === 'bad_request' ||
              err.kind === 'content_filter'
            ) {
              skipModel = t.modelId;
              break;
            }
            // An account without credit (`insufficient_quota`, a 402) is that key's: the channel's
            // next key may have some, so each key is tried once (no wait) before the next
            // upstream. Not set aside as a rejected key is: the key probe's model listing, free
            // of charge, would put it back at once, and credit comes back without a sign.
            if (err.kind === 'payment' && i < Math.min(opts.maxAttempts, keys.length) - 1) continue;
            if (!err.retryable || i === opts.maxAttempts - 1) break;
            if (opts.health.state(c.healthKey) === 'open') break;
            const backoff = Math.min(opts.retryMaxMs, opts.retryBaseMs * 2 ** i);
            let wait = Math.floor(random() * backoff);
            if (err.retryAfterMs !== undefined) {
              if (err.retryAfterMs > opts.retryMaxMs) break; // too long: try the next upstream now
              // A floor, not a replacement: `Retry-After: 0` does not make the retry immediate.
              wait = Math.max(wait, err.retryAfterMs);
            }
            await sleep(wait, signal);
          }
        }
      } finally {
        if (acquired) opts.health.release(c.healthKey, probe);
      }
    }
    throw finalError(filtered ?? lastError ?? unfit);
  } catch (err) {
    // The trail travels with the error so the route can log it and send it in the header.
    if (typeof err === 'object' && err !== null) trails.set(err, attempts);
    throw err;
  }
}

function finalError(err: UpstreamError | GatewayError | undefined): Error {
  return err ?? new GatewayError(503, 'no upstream could serve the request');
}

export function abortableSleep(ms: number, signal?: CancelSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `x-modelgate-attempts` value: `provider/model=ok|kind[:status]` entries. Upstream and model
 * names are any text an admin typed; a header takes printable ASCII only (Node throws on what is
 * past Latin-1), so anything else is percent-encoded as UTF-8 (`通道` -> `%E9%80%9A%E9%81%93`).
 */
export function attemptsHeader(attempts: AttemptRecord[]): string {
  const a = attempts.length === 1 ? attempts[0]! : undefined;
  // The common trail, one attempt that succeeded: the same text, made once per upstream and model.
  if (a?.ok) return okHeaders.take(okHeader, a.provider, a.model, true);
  return attempts
    .map(
      (a) =>
        `${headerText(a.provider)}/${headerText(a.model)}=${a.ok ? 'ok' : `${a.error_kind}${a.upstream_status ? `:${a.upstream_status}` : ''}`}`,
    )
    .join(', ');
}

const okHeaders = new KeyTree<string>(10_000);
const okHeader = (provider: string, model: string) => `${headerText(provider)}/${headerText(model)}=ok`;

const NOT_HEADER_TEXT = /[^\x20-\x7e]/;

/** Printable ASCII as it is; every other character as its UTF-8 bytes, percent-encoded. */
export function headerText(s: string): string {
  if (!NOT_HEADER_TEXT.test(s)) return s;
  let out = '';
  for (const ch of s) {
    if (!NOT_HEADER_TEXT.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
