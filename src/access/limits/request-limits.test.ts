import { describe, expect, it } from 'vitest';
import { sampledTokens } from '../../gateway/chat/tokens.js';
import { MemoryRateLimiter } from '../rate-limit/memory-rate-limiter.js';
import { estimatePromptTokens } from './prompt-estimate.js';
import { RequestLimits } from './request-limits.js';

const caller = (
  o: Partial<{ keyId: number; userId: number; rpm: number | null; tpm: number | null }> = {},
) => ({
  keyId: 1,
  userId: 1,
  rpm: null,
  tpm: null,
  ...o,
});

describe('RequestLimits', () => {
  it('applies nothing without limits', async () => {
    const l = new RequestLimits(new MemoryRateLimiter(() => 0), { userRpm: 0 });
    expect(l.applies(caller())).toBe(false);
    expect(await l.admit(caller(), 10)).toMatchObject({ allowed: true, binding: undefined });
  });

  it('refuses past the key rpm and reports the wait', async () => {
    const l = new RequestLimits(new MemoryRateLimiter(() => 0), { userRpm: 0 });
    const c = caller({ rpm: 2 });
    expect((await l.admit(c, 0)).allowed).toBe(true);
    expect((await l.admit(c, 0)).binding?.result.remaining).toBe(0);
    const denied = await l.admit(c, 0);
    expect(denied).toMatchObject({ allowed: false, binding: { scope: 'key_rpm', limit: 2 } });
    expect(denied.binding!.result.retryAfterSec).toBe(30);
  });

  it('limits a user across all of their keys', async () => {
    const l = new RequestLimits(new MemoryRateLimiter(() => 0), { userRpm: 3 });
    const results = [];
    for (let i = 0; i < 5; i++)
      results.push((await l.admit(caller({ keyId: 10 + i, userId: 7 }), 0)).allowed);
    expect(results).toEqual([true, true, true, false, false]);
    expect((await l.admit(caller({ keyId: 99, userId: 8 }), 0)).allowed).toBe(true);
  });

  it('charges the prompt up front and the rest of the usage after the call', async () => {
    const l = new RequestLimits(new MemoryRateLimiter(() => 0), { userRpm: 0 });
    const c = caller({ tpm: 100 });
    const first = await l.admit(c, 30);
    expect(first.binding).toMatchObject({ scope: 'key_tpm', result: { remaining: 70 } });
    await l.chargeTokens(1, 100, 50); // the call used 80 in all
    expect((await l.admit(c, 30)).allowed).toBe(false); // 20 left
    expect((await l.admit(c, 20)).allowed).toBe(true);
    // An overrun empties the allowance instead of going into debt.
    await l.chargeTokens(1, 100, 500);
    expect((await l.admit(c, 1)).allowed).toBe(false);
  });

  it('lets a prompt larger than the whole allowance through on an idle key', async () => {
    const l = new RequestLimits(new MemoryRateLimiter(() => 0), { userRpm: 0 });
    expect((await l.admit(caller({ tpm: 10 }), 5000)).allowed).toBe(true);
    expect((await l.admit(caller({ tpm: 10 }), 1)).allowed).toBe(false);
  });
});

describe('estimatePromptTokens', () => {
  it('counts chat prompts and embedding text, not image payloads', () => {
    const chat = estimatePromptTokens({ messages: [{ role: 'user', content: 'hello there world' }] });
    expect(chat).toBeGreaterThan(3);
    const text = estimatePromptTokens({ input: ['hello there world', 'again'] });
    expect(text).toBeGreaterThan(3);
    const img = estimatePromptTokens({
      inputs: [
        { content: [{ type: 'image_base64', image_base64: `data:image/png;base64,${'A'.repeat(5000)}` }] },
      ],
    });
    expect(img).toBeLessThan(5);
    expect(estimatePromptTokens(undefined)).toBe(0);
  });

  it('counts a token array as its length, and an array of them as the sum', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => i);
    expect(estimatePromptTokens({ input: ids(5000) })).toBe(5000);
    expect(estimatePromptTokens({ input: [ids(300), ids(200), ids(1)] })).toBe(501);
    // Strings are counted as before: token ids add nothing to them.
    const text = 'the quick brown fox jumps over the lazy dog';
    expect(estimatePromptTokens({ input: [text, text] })).toBe(2 * estimatePromptTokens({ input: text }));
    expect(estimatePromptTokens({ input: text })).toBe(sampledTokens([text]));
  });

  it('a request one limit refuses gives back what the others took', async () => {
    const l = new RequestLimits(new MemoryRateLimiter(() => 0), { userRpm: 3 });
    const c = caller({ rpm: 1, tpm: 100 });
    expect((await l.admit(c, 30)).allowed).toBe(true);
    // Over the key's 1 request a minute: its 30 tokens and the user's request come back.
    const refused = await l.admit(c, 30);
    expect(refused).toMatchObject({ allowed: false, binding: { scope: 'key_rpm' } });
    // The user's allowance: 3 a minute, 1 spent, so two more.
    expect((await l.admit(caller({ keyId: 2 }), 0)).allowed).toBe(true);
    // Key 1's tokens: 70 left, not 40.
    const tokens = await l.admit(caller({ keyId: 1, rpm: null, tpm: 100 }), 70);
    expect(tokens).toMatchObject({ allowed: true });
    expect((await l.admit(caller({ keyId: 3 }), 0)).allowed).toBe(false);
  });
});
