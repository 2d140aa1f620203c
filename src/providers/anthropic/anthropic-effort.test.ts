import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../gateway/chat/types.js';
import { anthropicEffort, effortLevels, takesEffort } from './anthropic-effort.js';

const target = (upstreamModel: string, extra?: Record<string, unknown>) => ({
  baseUrl: 'https://api.anthropic.com',
  apiKey: 'k',
  upstreamModel,
  extra,
});
const effortOf = (verbosity: string, model: string, extra?: Record<string, unknown>) =>
  anthropicEffort({ messages: [], verbosity } as ChatRequest, target(model, extra));

describe('effortLevels (by model name)', () => {
  it('Opus 4.5: low, medium, high; Opus and Sonnet 4.6: and max; Opus 4.7 and 5.x: all five', () => {
    const basic = ['low', 'medium', 'high'];
    const withMax = [...basic, 'max'];
    const all = ['low', 'medium', 'high', 'xhigh', 'max'];
    const cases: [string, string[]][] = [
      ['claude-opus-4-5-20251101', basic],
      ['claude-opus-4.5', basic],
      ['anthropic.claude-opus-4-5-20251101-v1:0', basic],
      ['claude-opus-4-5@20251101', basic],
      ['claude-opus-4-6', withMax],
      ['claude-sonnet-4-6', withMax],
      ['claude-opus-4-7', all],
      ['claude-opus-4-8', all],
      ['claude-sonnet-5', all],
      ['claude-opus-5-5', all],
    ];
    for (const [m, levels] of cases) expect(effortLevels(m), m).toEqual(levels);
  });

  it('no effort on Sonnet and Haiku 4.5, Opus 4.1, 4 and older, nor on a name it does not know', () => {
    for (const m of [
      'claude-sonnet-4-5-20250929',
      'claude-haiku-4-5-20251001',
      'claude-opus-4-1-20250805',
      'claude-opus-4-20250514',
      'claude-sonnet-4-20250514',
      'claude-3-7-sonnet-20250219',
      'claude-3-5-haiku-latest',
      'gpt-4o',
    ]) {
      expect(effortLevels(m), m).toBeUndefined();
      expect(takesEffort(m), m).toBe(false);
    }
  });

  it('the channel setting `effort` wins: false, true (the known levels, else low..high), a list', () => {
    expect(effortLevels('claude-opus-4-7', { effort: false })).toBeUndefined();
    expect(takesEffort('claude-opus-4-7', { effort: false })).toBe(false);
    expect(effortLevels('my-claude', { effort: true })).toEqual(['low', 'medium', 'high']);
    expect(effortLevels('claude-opus-4-6', { effort: true })).toEqual(['low', 'medium', 'high', 'max']);
    expect(effortLevels('my-claude', { effort: ['max', 'low', 'bogus'] })).toEqual(['low', 'max']);
    expect(takesEffort('my-claude', { effort: ['max'] })).toBe(true);
    expect(effortLevels('claude-opus-4-7', { effort: ['bogus'] })).toBeUndefined();
    expect(takesEffort('claude-opus-4-7', { effort: [] })).toBe(false);
    // Anything else leaves the name rule in charge.
    expect(takesEffort('claude-opus-4-5', { effort: 'yes' })).toBe(true);
    expect(takesEffort('claude-sonnet-4-5', { effort: 'yes' })).toBe(false);
  });
});

describe('anthropicEffort (verbosity at the nearest level the model takes)', () => {
  it('a level the model takes goes as it is', () => {
    expect(effortOf('low', 'claude-opus-4-5')).toBe('low');
    expect(effortOf('max', 'claude-opus-4-6')).toBe('max');
    expect(effortOf('xhigh', 'claude-opus-4-7')).toBe('xhigh');
  });

  it('one it lacks goes to the nearest, ties down: xhigh and max are high on Opus 4.5, xhigh high on 4.6', () => {
    expect(effortOf('max', 'claude-opus-4-5')).toBe('high');
    expect(effortOf('xhigh', 'claude-opus-4-5')).toBe('high');
    expect(effortOf('xhigh', 'claude-opus-4-6')).toBe('high');
    expect(effortOf('xhigh', 'claude-sonnet-4-6')).toBe('high');
    expect(effortOf('high', 'm', { effort: ['medium', 'max'] })).toBe('medium');
    expect(effortOf('xhigh', 'm', { effort: ['low', 'max'] })).toBe('max');
  });

  it('nothing for a model without effort, nor for a value outside the enum', () => {
    expect(effortOf('low', 'claude-sonnet-4-5')).toBeUndefined();
    expect(effortOf('minimal', 'claude-opus-4-7')).toBeUndefined();
    expect(anthropicEffort({ messages: [] }, target('claude-opus-4-7'))).toBeUndefined();
  });
});
