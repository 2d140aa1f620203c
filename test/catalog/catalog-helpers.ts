import type { TestGateway } from '../helpers/gateway.js';

export const APP_FIELDS = [
  'id',
  'name',
  'short_description',
  'description',
  'category',
  'version',
  'author',
  'author_url',
  'thumbnail_url',
  'download_url',
  'source_url',
  'documentation_url',
  'tags',
  'status',
  'featured',
  'download_count',
  'created_time',
  'updated_time',
  'created_by',
  'updated_by',
].sort();

/** Creates an app as `cookie` (an admin) and returns the stored record; throws on failure. */
export async function createApp(gw: TestGateway, cookie: string, body: Record<string, unknown>) {
  const r = await gw.call('POST', '/api/app', { cookie, body });
  if (r.status !== 200) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

/** A user with the given role, signed in: returns its session cookie and an access token. */
export async function userWithRole(gw: TestGateway, rootCookie: string, username: string, role: number) {
  const password = `${username}-password`;
  const r = await gw.call('POST', '/api/user', { cookie: rootCookie, body: { username, password, role } });
  if (r.status !== 200) throw new Error(`user create failed: ${r.status} ${JSON.stringify(r.body)}`);
  const cookie = await gw.login(username, password);
  const t = await gw.call('POST', '/api/user/tokens', { cookie, body: { name: 'catalog-test' } });
  return { id: r.body.data.id as number, cookie, token: t.body.data.token as string };
}
