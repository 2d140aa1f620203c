import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createApp } from './catalog-helpers.js';

/**
 * One fold for the stored text and the keyword, the same on SQLite and PostgreSQL: case
 * (final sigma, dotted capital I and sharp s included), compatibility forms, and the accents of
 * Latin and Greek letters (docs/catalog.md, "Search").
 */
let gw: TestGateway;
let root: string;

beforeAll(async () => {
  gw = await startTestGateway({ catalog: { search_rate_per_minute: 0 } });
  root = await gw.login();
  // The one that must rank first is created after its rivals, so ids alone would put it last.
  const apps = [
    { name: 'ΟΔΟΣ Navigator Pro' },
    { name: 'ΟΔΟΣ Navigator' },
    { name: 'İSTANBUL ΣΟΦΙΑ' },
    { name: 'Λόγος Pro' },
    { name: 'Λόγος' },
    { name: 'Straße Maps' },
    { name: 'STRASSE' },
    { name: 'Café Résumé' },
    { name: 'Cafe\u0301 Noir' },
    { name: 'ＡＢＣ Ｔｏｏｌ' },
    { name: 'Мой Сервис' },
    { name: 'Ёлка' },
    { name: 'Sea', description: 'ΘΆΛΑΣΣΑ means sea' },
    { name: 'Şehir', tags: 'ıspanak' },
    { name: 'Zerowidth Tool', description: 'keeps hyphen\u00ADated prose' },
  ];
  for (const a of apps) await createApp(gw, root, a);
});
afterAll(async () => gw?.close());

const find = async (keyword: string) => {
  const r = await gw.call('GET', `/api/app/search?keyword=${encodeURIComponent(keyword)}`);
  expect(r.status, keyword).toBe(200);
  return (r.body.data as Array<{ name: string }>).map((a) => a.name);
};

describe('search folds text the same on every backend', () => {
  it('finds a Greek name by its exact name, in either case and with either sigma', async () => {
    const exactFirst = ['ΟΔΟΣ Navigator', 'ΟΔΟΣ Navigator Pro'];
    expect(await find('ΟΔΟΣ Navigator')).toEqual(exactFirst);
    expect(await find('οδος navigator')).toEqual(exactFirst);
    expect(await find('Οδός NAVIGATOR')).toEqual(exactFirst);
    // Both names start with it: the older first.
    const prefix = ['ΟΔΟΣ Navigator Pro', 'ΟΔΟΣ Navigator'];
    expect(await find('ΟΔΟΣ')).toEqual(prefix);
    expect(await find('οδοσ')).toEqual(prefix);
    expect(await find('Οδός')).toEqual(prefix);
  });

  it('ranks the exact name first whatever sigma or accent it is spelled with', async () => {
    expect(await find('ΛΟΓΟΣ')).toEqual(['Λόγος', 'Λόγος Pro']);
    expect(await find('λογοσ')).toEqual(['Λόγος', 'Λόγος Pro']);
    expect(await find('Λόγος')).toEqual(['Λόγος', 'Λόγος Pro']);
  });

  it('folds the dotted capital I to i', async () => {
    expect(await find('İSTANBUL ΣΟΦΙΑ')).toEqual(['İSTANBUL ΣΟΦΙΑ']);
    expect(await find('istanbul')).toEqual(['İSTANBUL ΣΟΦΙΑ']);
    expect(await find('İstanbul σοφία')).toEqual(['İSTANBUL ΣΟΦΙΑ']);
    expect(await find('İ')).toContain('İSTANBUL ΣΟΦΙΑ');
    // The dotless ı folds to i as well (its capital is I): Turkish spelling is not told apart.
    expect(await find('ispanak')).toEqual(['Şehir']);
    expect(await find('sehir')).toEqual(['Şehir']);
  });

  it('matches ß and ss', async () => {
    expect(await find('Straße')).toEqual(['STRASSE', 'Straße Maps']);
    expect(await find('strasse')).toEqual(['STRASSE', 'Straße Maps']);
    expect(await find('STRASSE maps')).toEqual(['Straße Maps']);
    expect(await find('ß')).toEqual(['Straße Maps', 'STRASSE']);
  });

  it('ignores the accents of Latin and Greek letters, and compatibility forms', async () => {
    expect(await find('cafe')).toEqual(['Café Résumé', 'Cafe\u0301 Noir']);
    expect(await find('CAFÉ résume')).toEqual(['Café Résumé']);
    expect(await find('café noir')).toEqual(['Cafe\u0301 Noir']);
    expect(await find('abc tool')).toEqual(['ＡＢＣ Ｔｏｏｌ']);
    expect(await find('ＡＢＣ')).toEqual(['ＡＢＣ Ｔｏｏｌ']);
    expect(await find('θαλασσα')).toEqual(['Sea']);
  });

  it('ignores invisible characters pasted with a keyword or kept in prose', async () => {
    // A name copied from a web page brings soft hyphens and zero-width spaces along; names
    // cannot hold them, so such a keyword found nothing. Prose may hold them (a soft hyphen is a
    // hyphenation hint), and was not found by the word typed without one.
    expect(await find('Zerowidth Tool\u200B')).toEqual(['Zerowidth Tool']);
    expect(await find('zero\u00ADwidth')).toEqual(['Zerowidth Tool']);
    expect(await find('\uFEFFzero\u2060width tool')).toEqual(['Zerowidth Tool']);
    expect(await find('hyphenated')).toEqual(['Zerowidth Tool']);
    const blank = await gw.call('GET', `/api/app/search?keyword=${encodeURIComponent('\u200B\u00AD')}`);
    expect(blank.status).toBe(400);
    expect(blank.body.message).toBe('keyword: must not be empty');
  });

  it('keeps Cyrillic letters with marks apart from their base letters', async () => {
    expect(await find('МОЙ')).toEqual(['Мой Сервис']);
    expect(await find('мои')).toEqual([]);
    expect(await find('ёлка')).toEqual(['Ёлка']);
    expect(await find('елка')).toEqual([]);
  });
});
