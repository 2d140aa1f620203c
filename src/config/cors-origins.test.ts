import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load-config.js';

function problemsOf(env: Record<string, string>, overrides?: unknown): string[] {
  try {
    loadConfig(env, overrides);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('server.cors_origins', () => {
  it('is every origin by default', () => {
    expect(loadConfig({}).server.cors_origins).toEqual(['*']);
  });

  it('takes origins as browsers send them: lower case, no default port, no trailing slash', () => {
    const c = loadConfig({
      MODELGATE_SERVER_CORS_ORIGINS:
        'https://App.Example.com/, http://localhost:5173, https://*.Example.org, https://x.example:443, chrome-extension://AbCdEf',
    });
    expect(c.server.cors_origins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
      'https://*.example.org',
      'https://x.example',
      'chrome-extension://abcdef',
    ]);
  });

  it('none, or an empty list in the file, turns CORS off', () => {
    expect(loadConfig({ MODELGATE_SERVER_CORS_ORIGINS: 'none' }).server.cors_origins).toEqual([]);
    const dir = mkdtempSync(join(tmpdir(), 'mg-cors-'));
    writeFileSync(join(dir, 'c.yaml'), 'server:\n  cors_origins: []\n');
    expect(loadConfig({ MODELGATE_CONFIG: join(dir, 'c.yaml') }).server.cors_origins).toEqual([]);
  });

  it('refuses what would never match an Origin, naming the setting and the variable', () => {
    const problems = problemsOf({
      MODELGATE_SERVER_CORS_ORIGINS: 'https://app.example.com/chat,app.example.com,https://a.*.example,null',
    });
    expect(problems).toEqual([
      expect.stringMatching(
        /^server\.cors_origins \(from MODELGATE_SERVER_CORS_ORIGINS\): "https:\/\/app\.example\.com\/chat" is not an origin \(scheme:\/\/host\[:port\], no path\)/,
      ),
      expect.stringContaining('"app.example.com" is not an origin'),
      expect.stringContaining('"https://a.*.example" is not an origin'),
      expect.stringContaining('"null" is the origin of every sandboxed page'),
    ]);
    expect(problemsOf({}, { server: { cors_origins: ['none', 'https://a.example'] } })).toEqual([
      'server.cors_origins: none (CORS off) cannot be listed with origins',
    ]);
    expect(problemsOf({}, { server: { cors_origins: ['https://a.example:99999'] } })).toEqual([
      expect.stringContaining('its host or port does not parse'),
    ]);
  });
});
