import { describe, expect, it } from 'vitest';
import { attemptsHeader } from '../routing/execute.js';
import type { AttemptRecord } from '../routing/types.js';
import { attemptsJson } from './request-log-entry.js';

const ok = (provider: string, model: string, ms: number): AttemptRecord => ({
  model,
  provider,
  channel_id: 7,
  ok: true,
  ms,
});

describe('attempt trails', () => {
  it('the one-success shortcut writes exactly what JSON.stringify writes, names escaped', () => {
    for (const a of [
      [ok('openai', 'gpt-4o', 12)],
      [ok('my "quoted" \\ up\nstream', 'org/model\u2028x', 0)],
      [ok('openai', 'gpt-4o', 12), ok('openai', 'gpt-4o', 3)],
      [{ ...ok('p', 'm', 1), ok: false, error_kind: 'timeout', upstream_status: 504 }],
      [{ ...ok('p', 'm', 1.5) }],
    ]) {
      expect(attemptsJson(a)).toBe(JSON.stringify(a));
      expect(attemptsJson(a)).toBe(JSON.stringify(a)); // cached the second time
    }
  });

  it('the header shortcut matches the general form', () => {
    expect(attemptsHeader([ok('openai', 'gpt-4o', 12)])).toBe('openai/gpt-4o=ok');
    expect(attemptsHeader([ok('openai', 'gpt-4o', 13)])).toBe('openai/gpt-4o=ok');
    expect(
      attemptsHeader([
        { ...ok('a', 'm', 1), ok: false, error_kind: 'server_error', upstream_status: 500 },
        ok('b', 'm', 2),
      ]),
    ).toBe('a/m=server_error:500, b/m=ok');
  });
});
