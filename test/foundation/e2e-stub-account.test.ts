import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubGateway } from '../e2e/stub-gateway.js';
import { ROOT_PASSWORD, startTestGateway } from '../helpers/gateway.js';

// The browser suite runs against the real gateway (CI) or, with E2E_GATEWAY=stub, against the
// in-memory stand-in of test/e2e/stub-gateway.ts. The Account page's calls must behave alike on
// both, or a step passes on one and fails on the other (the stub once had no PUT /api/user/self
// nor access tokens). These are those calls, with one set of expectations run against each.

interface Target {
  url: string;
  password: string;
  close(): Promise<void>;
}

const targets: Record<'real' | 'stub', () => Promise<Target>> = {
  async real() {
    const gw = await startTestGateway();
    return { url: gw.url, password: ROOT_PASSWORD, close: () => gw.close() };
  },
  async stub() {
    const password = 'stub-root-password';
    const stub = await startStubGateway({
      webRoot: mkdtempSync(join(tmpdir(), 'stub-web-')),
      admin: { username: 'root', password },
      chatModel: 'e2e/fake-chat',
      answer: ['hi'],
    });
    return { url: stub.url, password, close: stub.close };
  },
};

describe.each(['real', 'stub'] as const)('the Account page calls on the %s gateway', (kind) => {
  let t: Target;
  let cookie = '';
  const call = async (method: string, path: string, body?: unknown, auth: { token?: string } = {}) => {
    const headers: Record<string, string> = auth.token
      ? { authorization: `Bearer ${auth.token}` }
      : { cookie };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(t.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any, cookie: r.headers.get('set-cookie') ?? '' };
  };
  const login = async (password: string) =>
    call('POST', '/api/user/login', { username: 'root', password }).then((r) => ({
      status: r.status,
      cookie: r.cookie.split(';')[0],
    }));

  beforeAll(async () => {
    t = await targets[kind]();
    cookie = (await login(t.password)).cookie;
  });
  afterAll(async () => t?.close());

  it('saves the display name and default model', async () => {
    const r = await call('PUT', '/api/user/self', { display_name: 'Root', default_model: 'e2e/fake-chat' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      data: { username: 'root', default_model: 'e2e/fake-chat' },
    });
    expect(r.body.data.password).toBeUndefined();
    const self = await call('GET', '/api/user/self');
    expect(self.body.data).toMatchObject({ display_name: 'Root', default_model: 'e2e/fake-chat' });
  });

  it('changes the password only with the current one', async () => {
    const wrong = await call('PUT', '/api/user/self', {
      current_password: 'not the password',
      password: 'whatever-password',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ success: false, message: 'current_password: does not match' });
    const missing = await call('PUT', '/api/user/self', { password: 'whatever-password' });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      success: false,
      message: 'current_password: required to change the password',
    });
    const short = await call('PUT', '/api/user/self', { current_password: t.password, password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.message).toMatch(/^password: /);

    const changed = await call('PUT', '/api/user/self', {
      current_password: t.password,
      password: 'e2e-changed-password',
    });
    expect(changed.status).toBe(200);
    expect((await login(t.password)).status).toBe(401);
    expect((await login('e2e-changed-password')).status).toBe(200);
    const back = await call('PUT', '/api/user/self', {
      current_password: 'e2e-changed-password',
      password: t.password,
    });
    expect(back.status).toBe(200);
  });

  it('refuses fields that are not self-service', async () => {
    const r = await call('PUT', '/api/user/self', { role: 1 });
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
  });

  it('creates, lists, honours and revokes a personal access token', async () => {
    const made = await call('POST', '/api/user/tokens', { name: 'e2e script' });
    expect(made.status).toBe(200);
    const token = made.body.data.token as string;
    expect(token).toMatch(/^mgt-/);
    expect(made.body.data).toMatchObject({ name: 'e2e script', expires_time: null });
    expect(token.startsWith(made.body.data.token_prefix)).toBe(true);

    const list = await call('GET', '/api/user/tokens');
    expect(list.body.data.map((x: { name: string }) => x.name)).toEqual(['e2e script']);
    expect(JSON.stringify(list.body)).not.toContain(token);

    const self = await call('GET', '/api/user/self', undefined, { token });
    expect(self.status).toBe(200);
    expect(self.body.data.username).toBe('root');

    expect((await call('DELETE', `/api/user/tokens/${made.body.data.id}`)).status).toBe(200);
    expect((await call('GET', '/api/user/self', undefined, { token })).status).toBe(401);
    expect((await call('GET', '/api/user/tokens')).body.data).toEqual([]);
    expect((await call('DELETE', `/api/user/tokens/${made.body.data.id}`)).status).toBe(404);
  });

  it("lists one user's keys with user_id", async () => {
    const self = (await call('GET', '/api/user/self')).body.data;
    const made = await call('POST', '/api/key', { name: 'e2e listed' });
    expect(made.status).toBe(200);
    try {
      const own = await call('GET', `/api/key?user_id=${self.id}`);
      expect(own.status).toBe(200);
      expect(own.body.data.map((k: { name: string }) => k.name)).toContain('e2e listed');
      const nobody = await call('GET', '/api/key?user_id=999999');
      expect(nobody.status).toBe(200);
      expect(nobody.body.data).toEqual([]);
      expect((await call('GET', '/api/key?user_id=abc')).status).toBe(400);
    } finally {
      await call('DELETE', `/api/key/${made.body.data.id}`);
    }
  });

  it('refuses a token that is already expired', async () => {
    const r = await call('POST', '/api/user/tokens', { name: 'old', expires_time: 1 });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^expires_time: /);
  });
});
