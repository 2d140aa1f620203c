import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/gateway/errors.js';
import { HealthTracker } from '../../src/gateway/routing/health.js';
import { type PlanInput, type PlanModel, planRoute } from '../../src/gateway/routing/plan.js';
import type { ProviderPrefs, RouteTarget } from '../../src/gateway/routing/types.js';

let nextId = 1;
function target(name: string, o: Partial<RouteTarget> & { prompt?: string; completion?: string } = {}) {
  const { prompt, completion, ...rest } = o;
  return {
    channelId: nextId++,
    channelName: name,
    kind: 'openai-compatible',
    baseUrl: 'http://x',
    keys: ['k'],
    upstreamModel: 'm',
    priority: 0,
    weight: 1,
    settings: {},
    modelId: 'acme/a',
    contextLength: 8000,
    maxCompletionTokens: null,
    pricing: { prompt: prompt ?? '0.000001', completion: completion ?? '0.000002', request: '0', image: '0' },
    supportedParameters: null,
    ...rest,
  } as RouteTarget;
}

const A = target('alpha', { priority: 10, prompt: '0.000003' });
const B = target('beta', { kind: 'anthropic', prompt: '0.000001', settings: { data_collection: 'deny' } });
const C = target('gamma', {
  settings: { provider: 'DeepInfra/turbo', quantization: 'fp8', data_collection: 'deny', zdr: true },
  prompt: '0.000002',
});
const M2 = target('delta', { modelId: 'acme/b' });
const TARGETS: Record<string, RouteTarget[]> = { 'acme/a': [A, B, C], 'acme/b': [M2], 'acme/none': [] };

type PlanOptions = Partial<Omit<PlanInput, 'models'>> & {
  models?: Array<string | PlanModel>;
  targetsFor?: (model: string) => RouteTarget[] | undefined;
};

function plan(prefs: ProviderPrefs | undefined, o: PlanOptions = {}) {
  const { models = ['acme/a'], targetsFor = (m: string) => TARGETS[m], ...rest } = o;
  return planRoute({
    models: models.map((m) => (typeof m === 'string' ? { name: m, targets: targetsFor(m) } : m)),
    prefs,
    requestedParams: [],
    adapterParams: (kind) => new Set(kind === 'anthropic' ? ['temperature', 'tools'] : ['temperature']),
    health: new HealthTracker({ failures: 2, windowMs: 60_000, cooldownMs: 60_000 }),
    random: () => 0,
    ...rest,
  }).map((c) => `${c.target.channelName}:${c.target.modelId}`);
}

const names = (xs: string[]) => xs.map((x) => x.split(':')[0]);

function planError(prefs: ProviderPrefs | undefined, o: PlanOptions = {}): GatewayError {
  try {
    plan(prefs, o);
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error('expected an error');
}

describe('planRoute', () => {
  it('default: priority tiers first, weighted random inside a tier', () => {
    expect(names(plan(undefined))).toEqual(['alpha', 'beta', 'gamma']);
    // random near 1 picks the last of the tier first.
    expect(names(plan(undefined, { random: () => 0.99 }))).toEqual(['alpha', 'gamma', 'beta']);
  });

  it('weights bias the draw inside a tier', () => {
    const heavy = target('heavy', { weight: 9 });
    const light = target('light', { weight: 1 });
    const counts = { heavy: 0, light: 0 };
    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return (seed - 1) / 2147483646;
    };
    for (let i = 0; i < 2000; i++) {
      const first = plan(undefined, { targetsFor: () => [light, heavy], random })[0]!.split(':')[0];
      counts[first as 'heavy' | 'light']++;
    }
    expect(counts.heavy / 2000).toBeGreaterThan(0.8);
    expect(counts.heavy / 2000).toBeLessThan(0.98);
  });

  it('appends fallback models after every upstream of the first model', () => {
    expect(plan(undefined, { models: ['acme/a', 'acme/b'] })).toEqual([
      'alpha:acme/a',
      'beta:acme/a',
      'gamma:acme/a',
      'delta:acme/b',
    ]);
  });

  it('order puts the named providers first (by name, kind or settings.provider), then the rest', () => {
    expect(names(plan({ order: ['deepinfra', 'anthropic'] }))).toEqual(['gamma', 'beta', 'alpha']);
    expect(names(plan({ order: ['BETA'] }))).toEqual(['beta', 'alpha', 'gamma']);
  });

  it('order with allow_fallbacks false keeps only the named providers', () => {
    expect(names(plan({ order: ['gamma', 'beta'], allow_fallbacks: false }))).toEqual(['gamma', 'beta']);
    // Without order: only the primary upstream.
    expect(names(plan({ allow_fallbacks: false }))).toEqual(['alpha']);
    // Without order but with only: every provider in only (openrouter.md: "the providers in
    // order/only"), in the usual order.
    expect(names(plan({ only: ['beta', 'gamma'], allow_fallbacks: false })).sort()).toEqual([
      'beta',
      'gamma',
    ]);
  });

  it('only and ignore filter, and a base slug matches its variants', () => {
    expect(names(plan({ only: ['deepinfra'] }))).toEqual(['gamma']);
    expect(names(plan({ ignore: ['alpha', 'anthropic'] }))).toEqual(['gamma']);
    expect(names(plan({ only: ['alpha', 'beta'], ignore: ['beta'] }))).toEqual(['alpha']);
    // A variant slug does not match the base.
    expect(() => plan({ only: ['deepinfra/other'] })).toThrow(GatewayError);
  });

  it('sort by price: cheapest first, priority breaks ties', () => {
    expect(names(plan({ sort: 'price' }))).toEqual(['beta', 'gamma', 'alpha']);
    expect(names(plan({ sort: { by: 'price', partition: 'model' } }))).toEqual(['beta', 'gamma', 'alpha']);
  });

  it('sort by throughput and latency use health figures; unmeasured go last', () => {
    const health = new HealthTracker({ failures: 2, windowMs: 60_000, cooldownMs: 60_000 });
    health.success(`${B.channelId}:acme/a`, { latencyMs: 100, completionTokens: 100, durationMs: 1000 });
    health.success(`${C.channelId}:acme/a`, { latencyMs: 50, completionTokens: 100, durationMs: 500 });
    expect(names(plan({ sort: 'throughput' }, { health }))).toEqual(['gamma', 'beta', 'alpha']);
    expect(names(plan({ sort: 'latency' }, { health }))).toEqual(['gamma', 'beta', 'alpha']);
  });

  it('sort exacto: highest success rate first (smoothed), unmeasured last, priority breaks ties', () => {
    const health = new HealthTracker({ failures: 100, windowMs: 60_000, cooldownMs: 60_000 });
    const ok = (t: RouteTarget, n: number) => {
      for (let i = 0; i < n; i++) health.success(`${t.channelId}:acme/a`, { latencyMs: 10 });
    };
    const fail = (t: RouteTarget, n: number) => {
      for (let i = 0; i < n; i++) health.failure(`${t.channelId}:acme/a`, 'server_error');
    };
    // gamma 1/1 (smoothed 2/3), beta 9/10 (10/12): the longer good record wins; alpha unmeasured.
    ok(C, 1);
    ok(B, 9);
    fail(B, 1);
    expect(names(plan({ sort: 'exacto' }, { health }))).toEqual(['beta', 'gamma', 'alpha']);
    expect(names(plan({ sort: { by: 'exacto' } }, { health }))).toEqual(['beta', 'gamma', 'alpha']);
    // Equal records: priority decides (alpha is priority 10).
    ok(A, 9);
    fail(A, 1);
    expect(names(plan({ sort: 'exacto' }, { health }))).toEqual(['alpha', 'beta', 'gamma']);
  });

  it("a model's own sort (a variant) orders its upstreams, unless provider sets sort or order", () => {
    const own = (sort: PlanModel['sort']): PlanModel => ({
      name: 'acme/a:x',
      targets: TARGETS['acme/a'],
      sort,
    });
    expect(names(plan(undefined, { models: [own('price')] }))).toEqual(['beta', 'gamma', 'alpha']);
    expect(names(plan({ sort: 'throughput' }, { models: [own('price')] }))).toEqual([
      'alpha',
      'beta',
      'gamma',
    ]);
    expect(names(plan({ order: ['gamma'] }, { models: [own('price')] }))).toEqual(['gamma', 'alpha', 'beta']);
    // Per model: the fallback keeps its own order.
    const other = { name: 'acme/a', targets: TARGETS['acme/a'] };
    expect(names(plan(undefined, { models: [other, own('price')] }))).toEqual([
      'alpha',
      'beta',
      'gamma',
      'beta',
      'gamma',
      'alpha',
    ]);
  });

  it('max_price accepts numbers and numeric strings (USD per million tokens)', () => {
    // alpha 3/M, gamma 2/M, beta 1/M prompt.
    expect(names(plan({ max_price: { prompt: 2 } }))).toEqual(['beta', 'gamma']);
    expect(names(plan({ max_price: { prompt: '1.5' } }))).toEqual(['beta']);
    expect(names(plan({ max_price: { prompt: '1' } }))).toEqual(['beta']);
    expect(names(plan({ max_price: { completion: 2, prompt: 10 } }))).toEqual(['alpha', 'beta', 'gamma']);
    const e = planError({ max_price: { prompt: 0.5 } });
    expect(e.status).toBe(503);
    expect(e.metadata).toMatchObject({ excluded_by: ['max_price'] });
  });

  it('data_collection deny keeps only upstreams that declare deny', () => {
    expect(names(plan({ data_collection: 'deny' }))).toEqual(['beta', 'gamma']);
    expect(names(plan({ data_collection: 'allow' }))).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('zdr keeps only upstreams that declare zero data retention; none is a 503 naming zdr', () => {
    expect(names(plan({ zdr: true }))).toEqual(['gamma']);
    expect(names(plan({ zdr: false }))).toEqual(['alpha', 'beta', 'gamma']);
    const e = planError({ zdr: true, ignore: ['gamma'] });
    expect(e.status).toBe(503);
    expect(e.metadata?.excluded_by).toContain('zdr');
  });

  it('quantizations match the declared quantization, undeclared is "unknown"', () => {
    expect(names(plan({ quantizations: ['fp8'] }))).toEqual(['gamma']);
    expect(names(plan({ quantizations: ['unknown'] }))).toEqual(['alpha', 'beta']);
  });

  it('require_parameters skips upstreams whose adapter or model lacks a requested parameter', () => {
    expect(names(plan({ require_parameters: true }, { requestedParams: ['tools'] }))).toEqual(['beta']);
    expect(names(plan({}, { requestedParams: ['tools'] }))).toEqual(['alpha', 'beta', 'gamma']);
    const picky = target('picky', { kind: 'anthropic', supportedParameters: ['temperature'] });
    const e = planError(
      { require_parameters: true },
      { requestedParams: ['tools'], targetsFor: () => [picky] },
    );
    expect(e.metadata).toMatchObject({ excluded_by: ['require_parameters'] });
  });

  it('order with allow_fallbacks false that leaves nothing is a 503 naming both', () => {
    // No upstream of acme/b is named in order, or none at all is.
    for (const order of [['beta'], ['nobody']]) {
      const e = planError({ order, allow_fallbacks: false }, { models: ['acme/b'] });
      expect(e.status).toBe(503);
      expect(e.metadata).toMatchObject({ excluded_by: ['order', 'allow_fallbacks'] });
    }
    // Beside another filter, each that removed upstreams is named.
    const e = planError({ only: ['alpha', 'beta'], order: ['gamma'], allow_fallbacks: false });
    expect(e.metadata).toMatchObject({ excluded_by: ['only', 'order', 'allow_fallbacks'] });
    // A filter that removed nothing is not named: `only` left nothing for order to remove.
    const only = planError({ only: ['nobody'], order: ['alpha'], allow_fallbacks: false });
    expect(only.metadata).toMatchObject({ excluded_by: ['only'] });
  });

  it('combines filters and ordering', () => {
    expect(names(plan({ data_collection: 'deny', sort: 'price', ignore: ['beta'] }))).toEqual(['gamma']);
    expect(
      names(plan({ order: ['alpha', 'gamma'], allow_fallbacks: false, max_price: { prompt: '2.5' } })),
    ).toEqual(['gamma']);
  });

  it('open circuits go last', () => {
    const health = new HealthTracker({ failures: 1, windowMs: 60_000, cooldownMs: 60_000 });
    health.failure(`${A.channelId}:acme/a`, 'server_error');
    expect(names(plan(undefined, { health }))).toEqual(['beta', 'gamma', 'alpha']);
  });

  it('unknown model is a 404, a model without enabled upstreams a 503', () => {
    expect(planError(undefined, { models: ['nope/x'] }).status).toBe(404);
    expect(planError(undefined, { models: ['acme/none'] }).status).toBe(503);
    // An unknown fallback next to a known model is ignored.
    expect(names(plan(undefined, { models: ['nope/x', 'acme/b'] }))).toEqual(['delta']);
  });
});
