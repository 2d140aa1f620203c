import type { UpstreamErrorKind } from '../errors.js';

/**
 * Per (upstream, model) health: rolling latency, time to first token, throughput and error
 * rate, plus a circuit breaker. The breaker opens after `failures` failures in a row within `windowMs`
 * (never on one error, the complaint users have about other gateways), lets one probe through
 * after `cooldownMs` (half-open) and closes on its success.
 *
 * Credentials that fail auth are set aside one by one (`keyFailed`), so a channel with several
 * keys keeps working on the others; a channel whose keys all failed is reported as disabled.
 */
export type CircuitState = 'closed' | 'open' | 'half_open';

/** What `tryAcquire` admitted: a request on a closed circuit, the half-open probe, or none. */
export type Admission = 'pass' | 'probe' | null;

/** How to reach an upstream to probe one of its keys. */
export interface ProbeTarget {
  kind: string;
  baseUrl: string;
  upstreamModel: string;
  settings: Record<string, unknown>;
}

export interface HealthOptions {
  failures: number;
  windowMs: number;
  cooldownMs: number;
}

interface Entry {
  failuresAt: number[];
  openedAt: number;
  probing: boolean;
  state: CircuitState;
  /** Exponentially weighted moving averages. */
  latencyMs: number;
  ttftMs: number;
  tokensPerSec: number;
  successes: number;
  errors: number;
  lastError: UpstreamErrorKind | null;
  lastErrorAt: number;
}

export interface HealthSnapshot {
  target: string;
  state: CircuitState;
  latency_ms: number | null;
  ttft_ms: number | null;
  tokens_per_sec: number | null;
  error_rate: number;
  requests: number;
  last_error: UpstreamErrorKind | null;
  last_error_at: number | null;
}

const ALPHA = 0.2;

export class HealthTracker {
  private readonly entries = new Map<string, Entry>();
  private readonly badKeys = new Map<number, Set<string>>();
  private readonly probeTargets = new Map<number, ProbeTarget>();

  constructor(private readonly opts: HealthOptions) {}

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) {
      e = {
        failuresAt: [],
        openedAt: 0,
        probing: false,
        state: 'closed',
        latencyMs: Number.NaN,
        ttftMs: Number.NaN,
        tokensPerSec: Number.NaN,
        successes: 0,
        errors: 0,
        lastError: null,
        lastErrorAt: 0,
      };
      this.entries.set(key, e);
    }
    return e;
  }

  /** Current state, moving open -> half_open when the cooldown has passed. */
  state(key: string, now = Date.now()): CircuitState {
    const e = this.entries.get(key);
    if (!e) return 'closed';
    if (e.state === 'open' && now - e.openedAt >= this.opts.cooldownMs) e.state = 'half_open';
    return e.state;
  }

  /**
   * Whether a request may go to this target now: `'pass'` while the circuit is closed, `'probe'`
   * for the one request let through when it is half-open (until it reports back), null when
   * refused. Whoever was admitted passes `probe` back to `success`, `failure` and `release`:
   * only the probe's outcome moves a circuit that is not closed, so a request admitted before the
   * circuit opened and ending later neither closes it nor frees the probe's slot.
   */
  tryAcquire(key: string, now = Date.now()): Admission {
    const s = this.state(key, now);
    if (s === 'closed') return 'pass';
    if (s === 'open') return null;
    const e = this.entry(key);
    if (e.probing) return null;
    e.probing = true;
    return 'probe';
  }

  success(
    key: string,
    m: { latencyMs: number; ttftMs?: number; completionTokens?: number; durationMs?: number },
    probe = false,
  ): void {
    const e = this.entry(key);
    e.successes++;
    e.latencyMs = ewma(e.latencyMs, m.latencyMs);
    if (m.ttftMs !== undefined) e.ttftMs = ewma(e.ttftMs, m.ttftMs);
    if (m.completionTokens && m.durationMs && m.durationMs > 0)
      e.tokensPerSec = ewma(e.tokensPerSec, (m.completionTokens * 1000) / m.durationMs);
    if (probe) {
      e.probing = false;
      e.state = 'closed';
    } else if (e.state !== 'closed') return;
    // A success starts the count of failures again: the circuit opens on failures in a row.
    // Not a new array per success: this entry lives for good, a fresh young array hanging off
    // it per request survived scavenges for nothing.
    if (e.failuresAt.length > 0) e.failuresAt = [];
  }

  /** Records a failure that counts against the upstream (not a client mistake). */
  failure(key: string, kind: UpstreamErrorKind, probe = false, now = Date.now()): void {
    const e = this.entry(key);
    e.errors++;
    e.lastError = kind;
    e.lastErrorAt = now;
    if (probe) {
      e.state = 'open';
      e.openedAt = now;
      e.probing = false;
      return;
    }
    // Open or half-open: a request admitted before it opened says nothing the probe will not.
    if (e.state !== 'closed') return;
    e.failuresAt = e.failuresAt.filter((t) => now - t < this.opts.windowMs);
    e.failuresAt.push(now);
    if (e.failuresAt.length >= this.opts.failures) {
      e.state = 'open';
      e.openedAt = now;
    }
  }

  /**
   * The half-open probe's upstream has started serving: a stream's first content went to the
   * client, where no fallback is possible any more. The circuit closes now, not when the stream
   * ends (a minute-long answer would otherwise keep every other request from the upstream for the
   * minute). The rest of that request is an ordinary one: its end is reported with `probe` false,
   * so a later failure counts as any failure of a closed circuit, its success as any success, and
   * neither frees a slot a later probe may hold. The successes and figures are counted at its end.
   */
  probeServed(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.probing = false;
    e.state = 'closed';
    if (e.failuresAt.length > 0) e.failuresAt = [];
  }

  /** A request that ended without a verdict (client went away); a probe frees the half-open slot. */
  release(key: string, probe = false): void {
    if (!probe) return;
    const e = this.entries.get(key);
    if (e) e.probing = false;
  }

  /** `target` is remembered so a periodic probe can ask the upstream whether the key works again. */
  keyFailed(channelId: number, apiKey: string, target?: ProbeTarget): void {
    const set = this.badKeys.get(channelId) ?? new Set<string>();
    set.add(apiKey);
    this.badKeys.set(channelId, set);
    if (target) this.probeTargets.set(channelId, target);
  }

  /** A set-aside key that answered a probe successfully comes back into rotation. */
  keyRestored(channelId: number, apiKey: string): void {
    const set = this.badKeys.get(channelId);
    set?.delete(apiKey);
    if (set && set.size === 0) this.badKeys.delete(channelId);
  }

  /** Keys set aside, with what is needed to probe them. */
  setAside(): Array<{ channelId: number; keys: string[]; target: ProbeTarget | undefined }> {
    return [...this.badKeys.entries()].map(([channelId, keys]) => ({
      channelId,
      keys: [...keys],
      target: this.probeTargets.get(channelId),
    }));
  }

  /**
   * The channel's keys less those set aside. `target` is the channel as it is now: a key set
   * aside while it pointed elsewhere (another base URL or kind: an admin fixing the address the
   * 401 came from) is given its chance again, and keys no longer on the channel stop being
   * probed, on every instance alike (each reads the channel from the registry).
   */
  usableKeys(channelId: number, keys: string[], target?: ProbeTarget): string[] {
    const bad = this.badKeys.get(channelId);
    if (!bad) return keys;
    const was = this.probeTargets.get(channelId);
    if (target && was && (was.baseUrl !== target.baseUrl || was.kind !== target.kind)) {
      this.resetKeys(channelId);
      return keys;
    }
    const usable: string[] = [];
    let stillThere = 0;
    for (const k of keys) {
      if (bad.has(k)) stillThere++;
      else usable.push(k);
    }
    if (stillThere < bad.size) for (const k of bad) if (!keys.includes(k)) bad.delete(k);
    if (bad.size === 0) {
      this.resetKeys(channelId);
      return keys;
    }
    return usable;
  }

  /** Forget auth failures of a channel (its keys changed, or a probe succeeded). */
  resetKeys(channelId: number): void {
    this.badKeys.delete(channelId);
    this.probeTargets.delete(channelId);
  }

  /** Rolling figures (NaN until measured) and the counts of successes and of failures that count. */
  figures(key: string): {
    latencyMs: number;
    ttftMs: number;
    tokensPerSec: number;
    successes: number;
    errors: number;
  } {
    const e = this.entries.get(key);
    return e
      ? {
          latencyMs: e.latencyMs,
          ttftMs: e.ttftMs,
          tokensPerSec: e.tokensPerSec,
          successes: e.successes,
          errors: e.errors,
        }
      : { latencyMs: Number.NaN, ttftMs: Number.NaN, tokensPerSec: Number.NaN, successes: 0, errors: 0 };
  }

  snapshot(now = Date.now()): HealthSnapshot[] {
    return [...this.entries.entries()].map(([target, e]) => ({
      target,
      state: this.state(target, now),
      latency_ms: num(e.latencyMs),
      ttft_ms: num(e.ttftMs),
      tokens_per_sec: num(e.tokensPerSec),
      error_rate: e.successes + e.errors === 0 ? 0 : e.errors / (e.successes + e.errors),
      requests: e.successes + e.errors,
      last_error: e.lastError,
      last_error_at: e.lastErrorAt ? Math.floor(e.lastErrorAt / 1000) : null,
    }));
  }

  disabledKeys(): Array<{ channel_id: number; keys: number }> {
    return [...this.badKeys.entries()].map(([channel_id, s]) => ({ channel_id, keys: s.size }));
  }
}

const ewma = (prev: number, x: number) => (Number.isNaN(prev) ? x : prev + ALPHA * (x - prev));
const num = (x: number) => (Number.isNaN(x) ? null : Math.round(x * 10) / 10);
