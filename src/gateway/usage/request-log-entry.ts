import { clampInt, INT32_MAX, MAX_EXACT } from '../../store/column-bounds.js';
import type { NewRequestLogRow } from '../../store/logs-repo.js';
import { ShutdownCut } from '../cancel.js';
import { GatewayError, UpstreamError } from '../errors.js';
import { KeyTree } from '../key-tree.js';
import type { AttemptRecord } from '../routing/types.js';

/** One finished request, as the chat and embeddings routes report it. Columns of `request_logs`. */
export interface RequestLogEntry {
  /** Unix seconds; defaults to the moment `record` is called. */
  created_time?: number;
  request_id: string;
  user_id: number | null;
  key_id: number | null;
  /** e.g. 'chat.completions', 'embeddings', 'multimodalembeddings'. */
  endpoint: string;
  model: string;
  /** The upstream that served (or last failed). */
  provider?: string;
  channel_id?: number | null;
  prompt_tokens?: number;
  completion_tokens?: number;
  cost_micros?: number;
  latency_ms?: number;
  ttft_ms?: number | null;
  /** HTTP status sent to the client. */
  status: number;
  error_kind?: string | null;
  stream?: boolean;
  /** The attempt trail (upstream, status, error kind, ms...), stored as JSON. */
  attempts?: unknown[] | null;
}

/**
 * Every row must be storable on both backends, whatever a client or an upstream sent: one row
 * PostgreSQL refuses fails its whole batch (and the settlements written with it). So integers
 * are clamped to their column (`integer` is 32-bit there), and text loses what PostgreSQL text
 * cannot hold (U+0000, replaced with U+FFFD) and what its column cannot fit.
 */
const int = (n: number | undefined) => clampInt(n, INT32_MAX);
const bigint = (n: number | undefined) => clampInt(n, MAX_EXACT);
/** `s` cut to `max` UTF-16 units, without NUL; the same string object in the usual case. */
const text = (s: string, max: number) => {
  const t = s.length > max ? s.slice(0, max) : s;
  return t.includes('\0') ? t.replaceAll('\0', '\uFFFD') : t;
};

export function toLogRow(e: RequestLogEntry, now: number): NewRequestLogRow {
  return {
    created_time: e.created_time === undefined ? now : bigint(e.created_time),
    request_id: text(e.request_id, 64),
    user_id: e.user_id,
    key_id: e.key_id,
    endpoint: text(e.endpoint, 64),
    model: text(e.model, 255),
    provider: e.provider === undefined ? '' : text(e.provider, 128),
    channel_id: e.channel_id ?? null,
    prompt_tokens: int(e.prompt_tokens),
    completion_tokens: int(e.completion_tokens),
    cost_micros: bigint(e.cost_micros),
    latency_ms: int(e.latency_ms),
    ttft_ms: e.ttft_ms === undefined || e.ttft_ms === null ? null : int(e.ttft_ms),
    status: e.status,
    error_kind: e.error_kind ? text(e.error_kind, 32) : null,
    stream: e.stream ? 1 : 0,
    // JSON escapes U+0000 (as the six characters \u0000): nothing to replace.
    attempts: e.attempts ? attemptsJson(e.attempts) : null,
  };
}

/**
 * The `error_kind` of a failed request: `shutdown` when the server cut it at the end of its
 * shutdown grace (whatever the call in flight threw on its way out), else the upstream's
 * classified kind, our error type, or why it stopped (`aborted`: the client left).
 */
export function errorKindOf(
  err: unknown,
  signal?: { readonly aborted: boolean; readonly reason: unknown },
): string | null {
  if (err === undefined || err === null) return null;
  if (err instanceof ShutdownCut || (signal?.aborted && signal.reason instanceof ShutdownCut))
    return 'shutdown';
  if (err instanceof UpstreamError) return err.kind;
  if (err instanceof GatewayError) return err.type;
  return signal?.aborted ? 'aborted' : 'internal';
}

/** The upstream tried last, for a request that no upstream served. */
export function lastProvider(attempts: AttemptRecord[] | undefined): string {
  return attempts && attempts.length > 0 ? attempts[attempts.length - 1]!.provider : '';
}

/**
 * `JSON.stringify(attempts)`, with the common trail (one attempt that succeeded) put together
 * from a prefix made once per upstream and model: the same text, without walking the record.
 */
export function attemptsJson(attempts: readonly unknown[]): string {
  const a = attempts.length === 1 ? (attempts[0] as AttemptRecord) : undefined;
  if (
    a === undefined ||
    a.ok !== true ||
    a.error_kind !== undefined ||
    a.upstream_status !== undefined ||
    !Number.isInteger(a.ms) ||
    !Number.isInteger(a.channel_id)
  )
    return JSON.stringify(attempts);
  return `${okPrefixes.take(okPrefix, a.provider, a.model, a.channel_id)}${a.ms}}]`;
}
const okPrefixes = new KeyTree<string>(10_000);
const okPrefix = (provider: string, model: string, channelId: number) =>
  `[{"model":${JSON.stringify(model)},"provider":${JSON.stringify(provider)},"channel_id":${channelId},"ok":true,"ms":`;
