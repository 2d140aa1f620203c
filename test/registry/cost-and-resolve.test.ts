import { describe, expect, it } from 'vitest';
import { costOf, costUsd } from '../../src/gateway/registry/cost.js';
import { defaultModels } from '../../src/gateway/registry/default-models.js';
import { normalizePrice, normalizePricing } from '../../src/gateway/registry/model-info.js';
import { ModelRegistry } from '../../src/gateway/registry/model-registry.js';

const registry = () => new ModelRegistry(defaultModels(), []);

describe('costOf', () => {
  it('prices prompt and completion tokens exactly (gpt-4o-mini: $0.15 / $0.60 per million)', () => {
    const m = registry().resolve('openai/gpt-4o-mini')!;
    // 1000 * 0.15 + 500 * 0.60 = 150 + 300 micro-USD
    expect(costOf(m, { prompt_tokens: 1000, completion_tokens: 500 })).toBe(450);
    expect(costOf(m, { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 })).toBe(750_000);
    // 7 * 0.15 + 8 * 0.60 = 5.85 micro-USD: charged, logged and told to the client as 6.
    expect(costOf(m, { prompt_tokens: 7, completion_tokens: 8 })).toBe(6);
    expect(costUsd(m, { prompt_tokens: 7, completion_tokens: 8 })).toBe(0.000006);
  });

  it('counts a malformed usage field as 0 for that part alone, never the whole bill', () => {
    const m = registry().resolve('openai/gpt-4o-mini')!;
    const bad = (x: unknown) => x as number;
    // 1000 * 0.15 + 500 * 0.60: a broken cache field does not make the call free.
    expect(costOf(m, { prompt_tokens: 1000, completion_tokens: 500, cached_tokens: bad('n/a') })).toBe(450);
    expect(costOf(m, { prompt_tokens: 1000, completion_tokens: 500, cache_write_tokens: bad({}) })).toBe(450);
    // A numeric string counts; a malformed completion count bills the prompt.
    expect(costOf(m, { prompt_tokens: bad('1000'), completion_tokens: 500 })).toBe(450);
    expect(costOf(m, { prompt_tokens: 1000, completion_tokens: bad('many') })).toBe(150);
  });

  it('bills cached prompt tokens at the cache-read price', () => {
    const m = registry().resolve('openai/gpt-4o')!;
    // 10000 prompt of which 8000 cached: 2000 * 2.5 + 8000 * 1.25 + 100 * 10 = 5000 + 10000 + 1000
    expect(costOf(m, { prompt_tokens: 10_000, cached_tokens: 8000, completion_tokens: 100 })).toBe(16_000);
  });

  it('adds per-request and per-image prices and falls back to the prompt price without a cache price', () => {
    const m = {
      pricing: normalizePricing({
        prompt: '0.000001',
        completion: 0.000002,
        request: '0.001',
        image: 0.0005,
      }),
    };
    // 100 * 1 + 10 * 2 + 1000 (request) + 2 * 500 (images) micro-USD; cached tokens at the prompt price
    expect(costOf(m, { prompt_tokens: 100, completion_tokens: 10, images: 2, cached_tokens: 50 })).toBe(2120);
    expect(costUsd(m, { prompt_tokens: 100, completion_tokens: 10, images: 2 })).toBeCloseTo(0.00212, 12);
  });

  it('prices Anthropic cache writes at their own rate (claude-sonnet-4: $3 / $3.75 / $0.30)', () => {
    const m = registry().resolve('claude-sonnet-4-20250514')!;
    expect(m.id).toBe('anthropic/claude-sonnet-4');
    // 1000 plain * 3 + 2000 written * 3.75 + 4000 read * 0.30 = 3000 + 7500 + 1200
    expect(costOf(m, { prompt_tokens: 7000, cache_write_tokens: 2000, cached_tokens: 4000 })).toBe(11_700);
  });

  it('prices one-hour cache writes at input_cache_write_1h (claude-sonnet-4: $6, twice the prompt)', () => {
    const m = registry().resolve('claude-sonnet-4-20250514')!;
    expect(m.pricing.input_cache_write_1h).toBe('0.000006');
    // 1000 plain * 3 + 500 five-minute writes * 3.75 + 1500 one-hour writes * 6 + 4000 read * 0.30
    const usage = {
      prompt_tokens: 7000,
      cache_write_tokens: 2000,
      cache_write_1h_tokens: 1500,
      cached_tokens: 4000,
    };
    expect(costOf(m, usage)).toBe(3000 + 1875 + 9000 + 1200);
    // One-hour writes are part of the writes: never more of them than writes.
    expect(costOf(m, { ...usage, cache_write_1h_tokens: 9000 })).toBe(3000 + 2000 * 6 + 1200);
  });

  it('falls back for one-hour writes: to input_cache_write, then to prompt', () => {
    const usage = { prompt_tokens: 1000, cache_write_tokens: 600, cache_write_1h_tokens: 400 };
    const priced = (p: Record<string, string>) =>
      costOf({ pricing: normalizePricing({ prompt: '0.000002', ...p }) }, usage);
    // 400 plain * 2 + 200 * 2.5 + 400 * 4
    expect(priced({ input_cache_write: '0.0000025', input_cache_write_1h: '0.000004' })).toBe(
      800 + 500 + 1600,
    );
    // no one-hour price: all 600 writes at input_cache_write
    expect(priced({ input_cache_write: '0.0000025' })).toBe(800 + 600 * 2.5);
    // no cache price at all: everything at the prompt price
    expect(priced({})).toBe(1000 * 2);
  });

  it("gives every registry Claude model Anthropic's web search price, billed per search", () => {
    const claudes = defaultModels().filter((m) => m.id.startsWith('anthropic/'));
    expect(claudes.length).toBeGreaterThan(0);
    for (const m of claudes) {
      expect(m.pricing.web_search, m.id).toBe('0.01');
      // Three searches: 0.03 USD on top of the tokens, in micro-USD.
      const tokens = costOf(m, { prompt_tokens: 10, completion_tokens: 0 });
      expect(costOf(m, { prompt_tokens: 10, completion_tokens: 0, web_searches: 3 }) - tokens, m.id).toBe(
        30_000,
      );
    }
  });

  it('gives every registry Claude model a one-hour write price of twice its prompt price', () => {
    const claudes = defaultModels().filter((m) => m.id.startsWith('anthropic/'));
    expect(claudes.length).toBeGreaterThan(0);
    for (const m of claudes) {
      const prompt = BigInt(Math.round(Number(m.pricing.prompt) * 1e12));
      expect(BigInt(Math.round(Number(m.pricing.input_cache_write_1h) * 1e12)), m.id).toBe(2n * prompt);
      expect(normalizePrice(m.pricing.input_cache_write_1h!), m.id).toBe(m.pricing.input_cache_write_1h);
    }
  });

  it('prices reasoning tokens at internal_reasoning when set, else at the completion price', () => {
    const priced = (more: Record<string, string>) => ({
      pricing: normalizePricing({ prompt: '0.000001', completion: '0.000002', ...more }),
    });
    const u = { prompt_tokens: 100, completion_tokens: 1000, reasoning_tokens: 800 };
    // 100 x $1 + 200 x $2 + 800 x $5 per million = 100 + 400 + 4000 micro-USD.
    expect(costOf(priced({ internal_reasoning: '0.000005' }), u)).toBe(4500);
    // Unset: every completion token at the completion price, as before: 100 + 2000.
    expect(costOf(priced({}), u)).toBe(2100);
    // More reasoning than completion counts as the whole completion (a malformed report).
    expect(costOf(priced({ internal_reasoning: '0.000005' }), { ...u, reasoning_tokens: 5000 })).toBe(
      100 + 5000,
    );
  });

  it('is zero for a free model', () => {
    expect(costOf({ pricing: normalizePricing({}) }, { prompt_tokens: 5000, completion_tokens: 5000 })).toBe(
      0,
    );
  });
});

describe('prices and names', () => {
  it('normalizes numbers and numeric strings to plain decimal strings', () => {
    expect(normalizePrice(1.5e-7)).toBe('0.00000015');
    expect(normalizePrice('2.5e-6')).toBe('0.0000025');
    expect(normalizePrice(0)).toBe('0');
    expect(() => normalizePrice('abc')).toThrow(/non-negative/);
    expect(() => normalizePrice(-1)).toThrow();
  });

  it('every default model has string prices, a context length and modalities', () => {
    for (const m of defaultModels()) {
      for (const k of ['prompt', 'completion', 'request', 'image'])
        expect(typeof m.pricing[k], `${m.id} ${k}`).toBe('string');
      expect(m.context_length).toBeGreaterThan(0);
      expect(m.output_modalities.length).toBeGreaterThan(0);
      expect(m.id).toMatch(/^[a-z]+\/\S+$/);
    }
  });

  it('resolves ids, upstream names and aliases, and refuses ambiguous plain names', () => {
    const r = new ModelRegistry(defaultModels(), [
      { id: 'acme/gpt-4o-mini', name: 'Acme mini' }, // a second entry answering to "gpt-4o-mini"
    ]);
    expect(r.resolve('openai/gpt-4o')?.id).toBe('openai/gpt-4o');
    expect(r.resolve('gpt-4o')?.id).toBe('openai/gpt-4o');
    expect(r.resolve('claude-3-5-haiku-latest')?.id).toBe('anthropic/claude-3.5-haiku');
    expect(r.resolve('gpt-4o-mini')).toBeUndefined();
    expect(r.resolve('openai/gpt-4o-mini')?.name).toBe('OpenAI: GPT-4o-mini');
    expect(r.resolve('no-such-model')).toBeUndefined();
  });

  it('layers config over defaults field by field', () => {
    const r = new ModelRegistry(defaultModels(), [
      { id: 'openai/gpt-4o', context_length: 64000, pricing: { prompt: 0.000003 } },
    ]);
    const m = r.resolve('openai/gpt-4o')!;
    expect(m.context_length).toBe(64000);
    expect(m.pricing.prompt).toBe('0.000003');
    expect(m.pricing.completion).toBe('0.00001');
    expect(m.source).toBe('config');
  });
});

describe('default registry: structured outputs', () => {
  it('Claude 4.5 models list response_format and structured_outputs; older Claude models do not', () => {
    const r = registry();
    for (const id of [
      'anthropic/claude-opus-4.5',
      'anthropic/claude-sonnet-4.5',
      'anthropic/claude-haiku-4.5',
    ])
      expect(r.resolve(id)!.supported_parameters, id).toEqual(
        expect.arrayContaining(['response_format', 'structured_outputs', 'reasoning', 'tools']),
      );
    for (const id of [
      'anthropic/claude-opus-4.1',
      'anthropic/claude-sonnet-4',
      'anthropic/claude-3.7-sonnet',
    ]) {
      const params = r.resolve(id)!.supported_parameters;
      expect(params, id).not.toContain('response_format');
      expect(params, id).not.toContain('structured_outputs');
    }
  });
});
