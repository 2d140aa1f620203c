import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from './schema.js';

/** The rows of docs/configuration.md's "Every setting" table, by setting. */
function documentedRows(): Map<string, string[]> {
  const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
  const section = doc.split('\n## Every setting\n')[1]?.split('\n## ')[0] ?? '';
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const setting = /^`([a-z_]+\.[a-z_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (setting) rows.set(setting, cells.slice(2, -1));
  }
  return rows;
}

/** Every scalar or list setting of the schema's sections, as `section.key`. */
function schemaSettings(): string[] {
  return Object.entries<any>(ConfigSchema.properties).flatMap(([section, s]) =>
    s.type === 'object' ? Object.keys(s.properties).map((key) => `${section}.${key}`) : [],
  );
}

describe('docs/configuration.md', () => {
  it('lists every setting of the schema, with its environment variable and default, and no other', () => {
    const rows = documentedRows();
    const settings = schemaSettings();
    expect(settings.length).toBeGreaterThan(50);
    expect(settings.filter((s) => !rows.has(s))).toEqual([]);
    expect([...rows.keys()].filter((s) => !settings.includes(s))).toEqual([]);
    for (const setting of settings) {
      const [section, key] = setting.split('.') as [string, string];
      const [env, defaultCell] = rows.get(setting)!;
      expect(env, setting).toBe(`\`MODELGATE_${section.toUpperCase()}_${key.toUpperCase()}\``);
      const d = (ConfigSchema.properties as any)[section].properties[key].default;
      const shown = Array.isArray(d) ? (d.length ? d.join(',') : 'none') : d === '' ? 'empty' : `\`${d}\``;
      expect(defaultCell, setting).toBe(shown);
    }
  });
});
