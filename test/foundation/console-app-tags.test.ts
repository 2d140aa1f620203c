import { describe, expect, it } from 'vitest';
import { normalizeTags } from '../../src/catalog/normalize-app.js';
import { tagsProblem } from '../../web/src/app-tags.js';

/** Whether the catalog takes `text` as an app's tags. */
function serverTakes(text: string): boolean {
  try {
    normalizeTags(text);
    return true;
  } catch {
    return false;
  }
}

// The app form says what the catalog would refuse about tags before sending, counting them as
// the catalog does: the two must agree on every entry.
describe('console app tags check', () => {
  const twenty = Array.from({ length: 20 }, (_, i) => `t${i}`);

  it('takes 20 tags and refuses 21, with the limit and how many to remove', () => {
    expect(tagsProblem(twenty.join(','))).toBeNull();
    expect(tagsProblem([...twenty, 'one more', 'and another'].join(', '))).toBe(
      'At most 20 tags; this has 22. Remove 2.',
    );
  });

  it('counts as the catalog does: blanks dropped, spellings search folds alike once', () => {
    const entries = [
      [...twenty, ' ', '', 'T3', ' t4 '].join(','),
      [...twenty.slice(0, 19), 'Café', 'cafe', 'CAFÉ'].join(','),
      [...twenty.slice(0, 19), 'Straße', 'STRASSE'].join(','),
      [...twenty, 'new one'].join(','),
      [...twenty.slice(0, 19), 'two  spaces', 'two spaces', 'x'].join(','),
      `ok,${'a'.repeat(64)}`,
      `ok,${'a'.repeat(65)}`,
      `ok,${'😀'.repeat(64)}`,
    ];
    for (const text of entries) expect(tagsProblem(text) === null, text).toBe(serverTakes(text));
  });

  it('names a tag past 64 characters and its length, in characters', () => {
    expect(tagsProblem(`ok, ${'b'.repeat(70)}`)).toBe(
      `Each tag can be at most 64 characters; “${'b'.repeat(70)}” has 70.`,
    );
    expect(tagsProblem('😀'.repeat(64))).toBeNull();
  });
});
