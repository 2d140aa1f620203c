import { describe, expect, it } from 'vitest';
import { commaList, expiresAt, pricingJson } from './option-parsers.js';

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const at = (v: string) => expiresAt(v, NOW);
const seconds = (ms: number) => Math.floor(ms / 1000);

describe('--expires', () => {
  it('reads a duration from now in hours, days or weeks', () => {
    expect(at('12h')).toBe(seconds(NOW) + 12 * 3600);
    expect(at('30d')).toBe(seconds(NOW) + 30 * 86_400);
    expect(at(' 2w ')).toBe(seconds(NOW) + 14 * 86_400);
  });

  it('reads ISO 8601 dates and times; a date alone is 00:00 UTC', () => {
    expect(at('2027-01-31')).toBe(seconds(Date.UTC(2027, 0, 31)));
    expect(at('2027-01-31T18:00Z')).toBe(seconds(Date.UTC(2027, 0, 31, 18)));
    expect(at('2027-01-31 18:00:30.5+02:00')).toBe(seconds(Date.UTC(2027, 0, 31, 16, 0, 30)));
    expect(at('2028-02-29')).toBe(seconds(Date.UTC(2028, 1, 29)));
  });

  it('refuses what has passed, days a month lacks, and anything else', () => {
    for (const past of ['0h', '2026-01-15T12:00Z', '2020-01-01'])
      expect(() => at(past)).toThrow(`must be in the future (${past} has passed)`);
    for (const bad of [
      '2027-02-29',
      '2027-04-31',
      '2027-13-01',
      '2027-01-31T24:00',
      '10y',
      '30',
      'tomorrow',
      'March 7, 2027',
      '-3d',
      '',
    ])
      expect(() => at(bad), bad).toThrow(
        'must be a duration from now (12h, 30d, 8w) or an ISO 8601 date or time',
      );
  });
});

it('comma lists drop blanks and trim items', () => {
  expect(commaList(' a, b,,c ,')).toEqual(['a', 'b', 'c']);
  expect(commaList('')).toEqual([]);
});

describe('--pricing', () => {
  it('reads a JSON object, leaving the prices to the admin API checks', () => {
    expect(pricingJson('{"acme/m": {"prompt": 1.5e-7}}')).toEqual({ 'acme/m': { prompt: 1.5e-7 } });
    expect(pricingJson('{}')).toEqual({});
    for (const bad of ['[1]', 'null', '"x"', '{', ''])
      expect(() => pricingJson(bad)).toThrow(/^must be a JSON object of model ids and their prices/);
  });
});
