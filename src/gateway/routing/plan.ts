import { takes } from '../chat/parameters.js';
import { GatewayError } from '../errors.js';
import { perObject } from '../per-object.js';
import type { HealthTracker } from './health.js';
import type { Candidate, ProviderPrefs, RouteTarget, SortBy } from './types.js';

/** One model of the request, resolved once (`model` first, then the `models` fallbacks). */
export interface PlanModel {
  /** The model as the request named it, for error messages. */
  name: string;
  /** Upstreams that serve it (enabled ones), or undefined when the model is unknown. */
  targets: RouteTarget[] | undefined;
  /** The order its variant asks for (`:nitro`, `:floor`, `:exacto`); `provider.sort` or `order` wins. */
  sort?: SortBy;
  /** Parameters its variant sets (`:thinking`: `reasoning`), for `require_parameters`. */
  params?: readonly string[];
}

export interface PlanInput {
  /** `model` first, then the `models` fallbacks, deduplicated. */
  models: PlanModel[];
  prefs: ProviderPrefs | undefined;
  /** Parameters the request sets (for `require_parameters`; only asked for then). */
  requestedParams: string[] | (() => string[]);
  /** What the upstream `target` (of adapter `kind`) can express, for `require_parameters`. */
  adapterParams(kind: string, target: RouteTarget): ReadonlySet<string> | undefined;
  health: HealthTracker;
  random?: () => number;
}

/**
 * The ordered candidate list for one request: model-major (every upstream of `model`, then of
 * the first fallback model, ...), filtered by the provider preferences, ordered by `order`,
 * `sort`, or by default priority tiers with weighted random order inside a tier. Upstreams
 * whose circuit is open go to the end of their model's list, yet are not tried while it stays
 * open: the executor skips them (`tryAcquire` is null), and a request whose every candidate is
 * open gets a 503. They are kept in the plan, last, because a cooldown that ends while the
 * request works through the list half-opens the circuit, and the request may then be its probe.
 */
export function planRoute(input: PlanInput): Candidate[] {
  const prefs = input.prefs ?? {};
  const random = input.random ?? Math.random;
  const out: Candidate[] = [];
  const excluded = new Set<string>();
  let known = false;
  const sortAsked = sortOf(prefs);
  for (const model of input.models) {
    const all = model.targets;
    if (!all) continue;
    known = true;
    if (all.length === 0) excluded.add('no_enabled_upstream');
    // Without preferences nothing is excluded: no filtering pass (the common request).
    let ts = input.prefs
      ? all.filter((t) => {
          const why = exclusion(t, prefs, input, model.params);
          if (why) excluded.add(why);
          return !why;
        })
      : all;
    ts = order(ts, prefs, sortAsked ?? model.sort, input, random);
    // Only the providers in `order` or `only` (already all that is left), else only the first.
    if (prefs.allow_fallbacks === false) {
      if (prefs.order?.length) {
        const named = ts.filter((t) => matchesAny(t, prefs.order!));
        // Together they removed the rest: a 503 names both, as each other filter names itself.
        if (named.length < ts.length) excluded.add('order').add('allow_fallbacks');
        ts = named;
      } else if (!prefs.only?.length) ts = ts.slice(0, 1);
    }
    // The common request: one model, one upstream, no fallbacks: a list made once per target.
    if (ts.length === 1 && input.models.length === 1) return alone(candidateOf(ts[0]!));
    const healthy: Candidate[] = [];
    const open: Candidate[] = [];
    for (const t of ts) {
      const c = candidateOf(t);
      (input.health.state(c.healthKey) === 'open' ? open : healthy).push(c);
    }
    out.push(...healthy, ...open);
  }
  const names = () => input.models.map((m) => m.name).join(', ');
  if (!known) throw new GatewayError(404, `model not found: ${names()}`, { param: 'model' });
  if (out.length === 0)
    throw new GatewayError(
      503,
      excluded.size === 1 && excluded.has('no_enabled_upstream')
        ? `no enabled upstream serves ${names()}`
        : 'no upstream satisfies the provider preferences',
      {
        param: 'provider',
        metadata: { excluded_by: [...excluded] },
      },
    );
  return out;
}

/** One Candidate per target object (targets live until the registry changes). */
const candidateOf = perObject(
  (t: RouteTarget): Candidate => ({ target: t, healthKey: `${t.channelId}:${t.modelId}` }),
);
/** The one-candidate list of a candidate (callers never change a plan's list). */
const alone = perObject((c: Candidate): Candidate[] => [c]);

function exclusion(
  t: RouteTarget,
  prefs: ProviderPrefs,
  input: PlanInput,
  variantParams: readonly string[] | undefined,
): string | undefined {
  if (prefs.only?.length && !matchesAny(t, prefs.only)) return 'only';
  if (prefs.ignore?.length && matchesAny(t, prefs.ignore)) return 'ignore';
  // Undeclared counts as "may collect": `deny` keeps only upstreams that declare they do not.
  if (prefs.data_collection === 'deny' && t.settings.data_collection !== 'deny') return 'data_collection';
  // The same for retention: undeclared counts as "may retain".
  if (prefs.zdr === true && t.settings.zdr !== true) return 'zdr';
  if (prefs.quantizations?.length) {
    const q = typeof t.settings.quantization === 'string' ? t.settings.quantization : 'unknown';
    if (!prefs.quantizations.includes(q)) return 'quantizations';
  }
  if (prefs.max_price && overPrice(t, prefs.max_price)) return 'max_price';
  if (prefs.require_parameters) {
    const adapter = input.adapterParams(t.kind, t);
    const asked =
      typeof input.requestedParams === 'function' ? input.requestedParams() : input.requestedParams;
    const requested = variantParams ? [...asked, ...variantParams] : asked;
    // One rule (chat/parameters.ts): the adapter sends it for this upstream and model, and the
    // model's list, when the registry has one, names it or one of its aliases.
    const lists = t.supportedParameters;
    const ok = requested.every(
      (p) => adapter !== undefined && takes(adapter, p) && (lists === null || takes(lists, p)),
    );
    if (!ok) return 'require_parameters';
  }
  return undefined;
}

function overPrice(t: RouteTarget, max: NonNullable<ProviderPrefs['max_price']>): boolean {
  const lim = (v: number | string | undefined) => (v === undefined ? Number.POSITIVE_INFINITY : Number(v));
  // prompt/completion limits are USD per million tokens; registry prices are per token.
  return (
    Number(t.pricing.prompt) * 1e6 > lim(max.prompt) + 1e-9 ||
    Number(t.pricing.completion) * 1e6 > lim(max.completion) + 1e-9 ||
    Number(t.pricing.request) > lim(max.request) ||
    Number(t.pricing.image) > lim(max.image)
  );
}

/** Provider names match the upstream's name, its kind, or its declared `provider`, case-insensitively; a base slug matches `slug/variant`. */
export function matchesAny(
  t: Pick<RouteTarget, 'channelName' | 'kind' | 'settings'>,
  names: string[],
): boolean {
  return names.some((n) =>
    providerSlugs(t).some((s) => s === n.toLowerCase() || s.startsWith(`${n.toLowerCase()}/`)),
  );
}

function providerSlugs(t: Pick<RouteTarget, 'channelName' | 'kind' | 'settings'>): string[] {
  const slugs = [t.channelName.toLowerCase(), t.kind.toLowerCase()];
  if (typeof t.settings.provider === 'string') slugs.push(t.settings.provider.toLowerCase());
  return slugs;
}

function sortOf(prefs: ProviderPrefs): SortBy | undefined {
  // `{by: null}` or `{partition}` alone sorts nothing: upstreams are load-balanced as without it.
  return ((typeof prefs.sort === 'string' ? prefs.sort : prefs.sort?.by) ?? undefined) as SortBy | undefined;
}

function order(
  ts: RouteTarget[],
  prefs: ProviderPrefs,
  sortBy: SortBy | undefined,
  input: PlanInput,
  random: () => number,
): RouteTarget[] {
  if (prefs.order?.length) {
    const rank = (t: RouteTarget) => {
      const i = prefs.order!.findIndex((n) => matchesAny(t, [n]));
      return i === -1 ? Number.MAX_SAFE_INTEGER : i;
    };
    return [...ts].sort((a, b) => rank(a) - rank(b));
  }
  if (sortBy === 'price')
    return [...ts].sort((a, b) => unitPrice(a) - unitPrice(b) || b.priority - a.priority);
  if (sortBy === 'throughput' || sortBy === 'latency') {
    const fig = (t: RouteTarget) => input.health.figures(`${t.channelId}:${t.modelId}`);
    const val = (t: RouteTarget) => (sortBy === 'throughput' ? -fig(t).tokensPerSec : fig(t).latencyMs);
    // Upstreams without figures yet go after measured ones, in priority order.
    return [...ts].sort((a, b) => nanLast(val(a), val(b)) || b.priority - a.priority);
  }
  if (sortBy === 'exacto') {
    // OpenRouter prefers the endpoints with the best tool-calling record; the gateway has no
    // quality scores, only each upstream's record of successes and failures that were its fault
    // (health.ts). Highest success rate first, smoothed by one success and one failure (Laplace)
    // so one lucky request does not outrank a long good record; unmeasured ones go last.
    const rate = (t: RouteTarget) => {
      const f = input.health.figures(`${t.channelId}:${t.modelId}`);
      const n = f.successes + f.errors;
      return n === 0 ? Number.NaN : -(f.successes + 1) / (n + 2);
    };
    return [...ts].sort((a, b) => nanLast(rate(a), rate(b)) || b.priority - a.priority);
  }
  return weightedTiers(ts, random);
}

const unitPrice = (t: RouteTarget) => Number(t.pricing.prompt) + Number(t.pricing.completion);

function nanLast(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  if (Number.isNaN(b)) return -1;
  return a - b;
}

/** Higher priority first; inside a tier, a weighted random permutation (load balancing). */
export function weightedTiers(ts: RouteTarget[], random: () => number): RouteTarget[] {
  if (ts.length <= 1) return ts;
  const tiers = new Map<number, RouteTarget[]>();
  for (const t of ts) {
    const tier = tiers.get(t.priority);
    if (tier) tier.push(t);
    else tiers.set(t.priority, [t]);
  }
  const out: RouteTarget[] = [];
  for (const p of [...tiers.keys()].sort((a, b) => b - a)) {
    const pool = [...tiers.get(p)!];
    while (pool.length > 0) {
      const total = pool.reduce((s, t) => s + Math.max(1, t.weight), 0);
      let r = random() * total;
      let i = 0;
      for (; i < pool.length - 1; i++) {
        r -= Math.max(1, pool[i]!.weight);
        if (r < 0) break;
      }
      out.push(pool.splice(i, 1)[0]!);
    }
  }
  return out;
}
