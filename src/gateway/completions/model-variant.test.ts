import { describe, expect, it, vi } from 'vitest';
import type { KeyPrincipal } from '../../access/api-keys.js';
import { setHidden } from '../chat/hidden.js';
import type { ChatRequest } from '../chat/types.js';
import type { GatewayError } from '../errors.js';
import { HealthTracker } from '../routing/health.js';
import type { RouteTarget } from '../routing/types.js';
import { type PlanDeps, planChat, requestFor } from './chat-plan.js';
import { resolveChatModel, splitVariant } from './model-variant.js';

let nextId = 1;
function target(name: string, modelId: string, o: Partial<RouteTarget> & { prompt?: string } = {}) {
  const { prompt, ...rest } = o;
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
    modelId,
    contextLength: 8000,
    maxCompletionTokens: null,
    pricing: { prompt: prompt ?? '0.000001', completion: '0.000002', request: '0', image: '0' },
    supportedParameters: null,
    ...rest,
  } as RouteTarget;
}

// Prices differ per upstream (a channel's settings.pricing), so a price sort shows.
const A = target('alpha', 'acme/a', { priority: 10, prompt: '0.000003' });
const B = target('beta', 'acme/a', { prompt: '0.000001' });
const X = target('exact', 'acme/a:free');
const D = target('delta', 'acme/b');
// acme/c: one upstream charges for it, one does not.
const C1 = target('paid', 'acme/c', { priority: 10 });
const C2 = target('gratis', 'acme/c', {
  pricing: { prompt: '0', completion: '0', request: '0', image: '0', input_cache_read: '0' },
});
const TARGETS: Record<string, RouteTarget[]> = {
  'acme/a': [A, B],
  'acme/a:free': [X],
  'acme/b': [D],
  'acme/c': [C1, C2],
};

const principal = (allowedModels: string[] | null = null) =>
  ({ key: { id: 1 }, user: { id: 1, default_model: '' }, allowedModels }) as unknown as KeyPrincipal;

function deps(health = new HealthTracker({ failures: 5, windowMs: 60_000, cooldownMs: 60_000 })): PlanDeps {
  return {
    targetsFor: (m) => TARGETS[m],
    embeddingOnly: () => false,
    // Ids only (no registry here): an entry admits the model it names, or the variant as written.
    allows: (allowed, m, asWritten) => allowed.includes(m) || allowed.includes(asWritten),
    adapterParams: () => new Set(['temperature', 'reasoning']),
    health,
    defaultModel: '',
  };
}

const req = (o: Partial<ChatRequest>): ChatRequest => ({
  model: 'acme/a',
  messages: [{ role: 'user', content: 'hi' }],
  ...o,
});
const served = (r: ChatRequest, p = principal()) =>
  planChat(r, p, deps()).candidates.map((c) => c.target.channelName);

describe('model variants', () => {
  it('splits only the suffixes it knows, at the last colon', () => {
    expect(splitVariant('openai/gpt-4o:nitro')).toEqual({ base: 'openai/gpt-4o', variant: 'nitro' });
    expect(splitVariant('llama3:8b')).toBeUndefined();
    expect(splitVariant(':nitro')).toBeUndefined();
    expect(splitVariant('openai/gpt-4o')).toBeUndefined();
  });

  it('looks the full id up first, and reads a suffix only when it misses', () => {
    const targetsFor = vi.fn((m: string) => TARGETS[m]);
    expect(resolveChatModel('acme/a', targetsFor, 'model')).toEqual({
      name: 'acme/a',
      id: 'acme/a',
      targets: [A, B],
    });
    expect(targetsFor.mock.calls).toEqual([['acme/a']]);
    expect(resolveChatModel('acme/a:free', targetsFor, 'model').targets).toEqual([X]);
    targetsFor.mockClear();
    expect(resolveChatModel('acme/a:floor', targetsFor, 'model')).toMatchObject({
      id: 'acme/a',
      sort: 'price',
    });
    expect(targetsFor.mock.calls).toEqual([['acme/a:floor'], ['acme/a']]);
  });

  it(':floor sorts by price and :nitro by throughput; an explicit provider.sort wins', () => {
    expect(served(req({}))).toEqual(['alpha', 'beta']);
    expect(served(req({ model: 'acme/a:floor' }))).toEqual(['beta', 'alpha']);
    expect(served(req({ model: 'acme/a:floor', provider: { sort: 'latency' } }))).toEqual(['alpha', 'beta']);
    const health = new HealthTracker({ failures: 5, windowMs: 60_000, cooldownMs: 60_000 });
    health.success(`${A.channelId}:acme/a`, { latencyMs: 100, completionTokens: 100, durationMs: 1000 });
    health.success(`${B.channelId}:acme/a`, { latencyMs: 50, completionTokens: 100, durationMs: 500 });
    const plan = planChat(req({ model: 'acme/a:nitro' }), principal(), deps(health));
    expect(plan.candidates.map((c) => c.target.channelName)).toEqual(['beta', 'alpha']);
    expect(plan.model).toBe('acme/a');
  });

  it(':thinking turns reasoning on for its own model only, keeping exclude; the request decides otherwise', () => {
    const both = planChat(req({ model: 'acme/b:thinking', models: ['acme/a'] }), principal(), deps());
    expect(both.candidates.map((c) => c.target.channelName)).toEqual(['delta', 'alpha', 'beta']);
    expect(requestFor(both, D).reasoning).toEqual({ enabled: true });
    expect(requestFor(both, A).reasoning).toBeUndefined();
    const hidden = planChat(
      req({ model: 'acme/a:thinking', reasoning: { exclude: true } }),
      principal(),
      deps(),
    );
    expect(requestFor(hidden, A).reasoning).toEqual({ exclude: true, enabled: true });
    const off = planChat(
      req({ model: 'acme/a:thinking', reasoning: { enabled: false } }),
      principal(),
      deps(),
    );
    expect(requestFor(off, A).reasoning).toEqual({ enabled: false });
    expect(off.thinking).toBeUndefined();
  });

  it(':thinking keeps the hidden Anthropic fields in the request planned and sent, middle-out cut included', () => {
    // What only the Anthropic adapter reads rides non-enumerable (setHidden): a copy of the
    // request made by a spread (reasoning turned on, messages cut) would leave it behind, and the
    // max_tokens the plan keeps room for would be worked out for another request than the one sent.
    const beta = ['interleaved-thinking-2025-05-14'];
    const thinking = { type: 'adaptive' };
    const long = Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: `turn ${i}: ${'lorem ipsum dolor sit amet '.repeat(60)}`,
    }));
    const asked = req({ model: 'acme/b:thinking', messages: long, transforms: ['middle-out'] });
    setHidden(setHidden(asked, 'anthropic_beta', beta), 'anthropic_thinking', thinking);
    const planned: ChatRequest[] = [];
    const d: PlanDeps = {
      ...deps(),
      sentMaxTokens: (r) => {
        planned.push(r);
        return 1000;
      },
    };
    const plan = planChat(asked, principal(), d);
    const sent = requestFor(plan, D);
    // The prompt was over the context (8,000): middle-out cut it, keeping room for the 1,000.
    expect(sent.messages.length).toBeLessThan(long.length);
    expect(planned.length).toBeGreaterThan(0);
    for (const r of [...planned, sent]) {
      expect(r.reasoning).toEqual({ enabled: true });
      expect(r.anthropic_beta).toBe(beta);
      expect(r.anthropic_thinking).toBe(thinking);
      // Still hidden: an OpenAI-compatible upstream, sent the request serialized, never sees them.
      expect(Object.keys(r)).not.toContain('anthropic_beta');
      expect(Object.keys(r)).not.toContain('anthropic_thinking');
    }
  });

  it(':thinking counts reasoning for require_parameters', () => {
    const d = {
      ...deps(),
      adapterParams: (_k: string, t: RouteTarget) => new Set(t === A ? ['reasoning'] : []),
    };
    const plan = planChat(
      req({ model: 'acme/a:thinking', provider: { require_parameters: true } }),
      principal(),
      d,
    );
    expect(plan.candidates.map((c) => c.target.channelName)).toEqual(['alpha']);
  });

  it('refuses :online always and :free for a priced model; serves :extended as the base', () => {
    const err = (r: ChatRequest) => {
      try {
        planChat(r, principal(), deps());
      } catch (e) {
        return e as GatewayError;
      }
      throw new Error('expected an error');
    };
    expect(err(req({ model: 'acme/a:online' }))).toMatchObject({ status: 400, param: 'model' });
    expect(err(req({ models: ['acme/b:online'] }))).toMatchObject({ status: 400, param: 'models' });
    expect(err(req({ model: 'acme/b:free' }))).toMatchObject({ status: 400, param: 'model' });
    // :free keeps the upstreams that charge nothing; in models too.
    expect(served(req({ model: 'acme/c:free' }))).toEqual(['gratis']);
    expect(served(req({ model: 'acme/b', models: ['acme/c:free'] }))).toEqual(['delta', 'gratis']);
    expect(served(req({ model: 'acme/c' }))).toEqual(['paid', 'gratis']);
    expect(served(req({ model: 'acme/a:extended' }))).toEqual(['alpha', 'beta']);
    expect(err(req({ model: 'acme/none:nitro' })).status).toBe(404);
  });

  it("reads the key's allow-list for the base model", () => {
    expect(served(req({ model: 'acme/a:nitro' }), principal(['acme/a']))).toEqual(['alpha', 'beta']);
    expect(() => served(req({ model: 'acme/b:nitro' }), principal(['acme/a']))).toThrow(/may not use/);
  });
});
