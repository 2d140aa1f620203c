import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelsRepo } from '../../src/store/channels-repo.js';
import { openDatabase } from '../../src/store/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { runCli } from '../helpers/run-cli.js';

let up: FakeUpstream;
let db: TestDatabase;
let env: Record<string, string>;

beforeAll(async () => {
  up = await startFakeUpstream({
    'GET /v1/models': {
      json: {
        object: 'list',
        data: [
          { id: 'llama3:8b', object: 'model' },
          { id: 'gpt-4o-mini', object: 'model' },
        ],
      },
    },
    'POST /v1/chat/completions': {
      json: {
        id: 'c1',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      },
    },
  });
  db = await createTestDatabase();
  env = { DATABASE_URL: db.url, MODELGATE_ROOT_PASSWORD: 'cli-root-password', MODELGATE_LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  await up?.close();
  await db?.drop();
});

/** Model listings asked for with this key (every command's start lists channels that name no models). */
const listed = (key: string) =>
  up.requests.filter(
    (r) => r.method === 'GET' && r.path === '/v1/models' && r.headers.authorization === `Bearer ${key}`,
  );

describe('modelgate channel', () => {
  it('adds an upstream, lists its models as the admin API does, and tests, changes and removes it', {
    timeout: 300_000,
  }, async () => {
    const cli = (args: string[], input?: string) => runCli(['channel', ...args], env, input);
    // `channel list` reads a database, and makes none (cli.test.ts): the gateway's start, or
    // `migrate`, makes it.
    expect(await runCli(['migrate'], env)).toMatchObject({ code: 0 });
    expect(await cli(['list'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^no channels yet/) });

    // The key comes from standard input, and reaches the upstream when the models are listed.
    const secret = 'sk-upstream-secret-0123456789';
    const base = `${up.url}/v1`;
    const added = await cli(
      ['add', '--name', 'vllm', '--kind', 'openai-compatible', '--base-url', base, '--keys', '-'],
      `${secret}\n`,
    );
    expect(added).toEqual({
      code: 0,
      stdout: [
        `added channel vllm (id 1, openai-compatible at ${base}, 1 key)`,
        'vllm serves 2 models: llama3:8b, openai/gpt-4o-mini',
        'check it with: modelgate channel test vllm',
        '',
      ].join('\n'),
      stderr: '',
    });
    expect(listed(secret)).toHaveLength(1);

    // A base URL without /v1: added, and the listing's failure is said with the gateway's hint.
    const nov1 = await cli([
      'add',
      '--name',
      'nov1',
      '--kind',
      'openai-compatible',
      '--base-url',
      `${up.url}/`,
      '--keys',
      'k-one-0123456789, k-two-0123456789,',
      '--priority',
      '-3',
    ]);
    const hint = `${up.url} answered 404: no route (openai-compatible channels take a base_url ending in /v1: ${up.url}/v1)`;
    expect(nov1.code).toBe(0);
    expect(nov1.stderr).toBe(`warning: listing the models of nov1 failed: ${hint}\n`);
    expect(nov1.stdout).toContain('added channel nov1 (id 2, openai-compatible at ');
    expect(nov1.stdout).toContain(
      'nov1 serves no models until its model list can be read: fix it with modelgate channel update nov1 --base-url URL',
    );

    const list = await cli(['list']);
    expect(list.code).toBe(0);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/\s{2,}/));
    expect(rows).toEqual([
      ['ID', 'NAME', 'KIND', 'STATUS', 'PRIORITY', 'WEIGHT', 'MODELS', 'KEYS', 'SOURCE', 'BASE_URL'],
      ['1', 'vllm', 'openai-compatible', 'enabled', '0', '1', '2', '1', 'api', base],
      ['2', 'nov1', 'openai-compatible', 'enabled', '-3', '1', '0', '2', 'api', up.url],
    ]);
    expect(list.stdout).not.toContain('0123456789');
    // Only `add` listed vllm's models: a command's start lists no upstream's (the two after it).
    expect(listed(secret)).toHaveLength(1);

    // The admin API's test: a tiny chat request through the channel, by name or by id.
    const tested = await cli(['test', 'vllm']);
    expect(tested.code).toBe(0);
    expect(tested.stdout).toMatch(/^channel vllm works: openai\/gpt-4o-mini answered in \d+ ms: "ok"\n$/);
    expect(up.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect((await cli(['test', '1', '--model', 'nope'])).stderr).toBe(
      "error: option '--model': channel 1 does not serve nope\n",
    );

    // Named models are tested against the wrong address: the failure says which, with the hint.
    expect((await cli(['update', 'nov1', '--models', 'm1'])).stdout).toContain('nov1 serves 1 model: m1');
    const failed = await cli(['test', 'nov1']);
    expect(failed.code).toBe(1);
    // The upstream's status and the kind of failure, as the console shows them.
    expect(failed.stderr).toMatch(
      /^error: channel nov1 failed with m1 after \d+ ms \(HTTP 404, not_found\): (.*)\n$/,
    );
    expect(failed.stderr).toContain(hint);

    // Fixed, and back to listing the upstream's models (an empty --models).
    const before = listed('k-one-0123456789').length;
    const fixed = await cli(['update', '2', '--base-url', base, '--models', '']);
    expect(fixed).toMatchObject({ code: 0, stderr: '' });
    expect(fixed.stdout).toContain('updated channel nov1 (id 2): base_url, models\nnov1 serves 2 models');
    expect(listed('k-one-0123456789').length).toBe(before + 1);

    // Its own prices: checked as the admin API checks settings.pricing, the field named; they
    // replace the channel's prices and keep its other settings.
    const d = openDatabase(db.url);
    try {
      const channels = new ChannelsRepo(d);
      await channels.update(2, (await channels.byId(2))!.revision, {
        settings: JSON.stringify({ rpm: 60, pricing: { 'x/y': { prompt: '1' } } }),
      });
      expect(await cli(['update', 'nov1', '--pricing', '{"openai/gpt-4o-mini": {"prompt": "-1"}}'])).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'error: option \'--pricing\': settings.pricing["openai/gpt-4o-mini"].prompt: must be a non-negative number or numeric string\n',
      });
      const priced = await cli(['update', 'nov1', '--pricing', '{"openai/gpt-4o-mini": {"prompt": 1.5e-7}}']);
      expect(priced).toMatchObject({ code: 0, stderr: '' });
      expect(priced.stdout).toMatch(/^updated channel nov1 \(id 2\): pricing\n/);
      expect(JSON.parse((await channels.byId(2))!.settings)).toEqual({
        rpm: 60,
        pricing: { 'openai/gpt-4o-mini': { prompt: '0.00000015' } },
      });
    } finally {
      await d.close();
    }

    expect((await cli(['disable', 'nov1'])).stdout).toBe('disabled channel nov1 (id 2)\n');
    expect((await cli(['list'])).stdout).toMatch(/\n2 +nov1 +openai-compatible +disabled /);
    expect((await cli(['enable', 'nov1'])).stdout).toContain(
      'enabled channel nov1 (id 2)\nnov1 serves 2 models',
    );

    expect(await cli(['remove', 'vllm'])).toEqual({
      code: 0,
      stdout: 'removed channel vllm (id 1)\n',
      stderr: '',
    });
    expect(await cli(['remove', 'vllm'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: no channel with id or name vllm (see modelgate channel list)\n',
    });
    expect((await cli(['list'])).stdout).not.toContain('vllm');

    // What only the service checks is named by its option too; a taken name is a conflict.
    const [ftp, taken] = await Promise.all([
      cli(['add', '--name', 'ftp', '--kind', 'openai-compatible', '--base-url', 'ftp://example.com']),
      cli(['add', '--name', 'nov1', '--kind', 'openai-compatible']),
    ]);
    expect(ftp).toMatchObject({
      code: 1,
      stderr: "error: option '--base-url': must be an absolute http(s) URL\n",
    });
    expect(taken).toMatchObject({ code: 1, stderr: 'error: channel nov1 already exists\n' });
  });

  it('test reads the models of a channel whose listing failed when it was added', {
    timeout: 120_000,
  }, async () => {
    // The upstream cannot list its models at first (503), and can by the time the channel is tested.
    const flaky = await startFakeUpstream({
      'GET /v1/models': [
        { status: 503, json: { error: { message: 'warming up' } } },
        { json: { object: 'list', data: [{ id: 'late-model', object: 'model' }] } },
      ],
      'POST /v1/chat/completions': {
        json: {
          id: 'c2',
          object: 'chat.completion',
          created: 1,
          model: 'late-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        },
      },
    });
    const own = await createTestDatabase();
    const cli = (args: string[]) => runCli(['channel', ...args], { ...env, DATABASE_URL: own.url });
    try {
      const base = `${flaky.url}/v1`;
      const added = await cli([
        'add',
        '--name',
        'late',
        '--kind',
        'openai-compatible',
        '--base-url',
        base,
        '--keys',
        'k-late',
      ]);
      expect(added.code).toBe(0);
      expect(added.stderr).toContain('warning: listing the models of late failed');
      const tested = await cli(['test', 'late']);
      expect(tested.stderr).toBe('');
      expect(tested.stdout).toMatch(/^channel late works: late-model answered in \d+ ms: "ok"\n$/);
    } finally {
      await flaky.close();
      await own.drop();
    }
  });

  it('refuses bad options as the admin API does, naming the option, before touching the database', async () => {
    const refused = (args: string[]) =>
      runCli(['channel', ...args], { DATABASE_URL: 'postgres://127.0.0.1:1/none' });
    const add = ['add', '--name', 'x', '--kind', 'openai-compatible'];
    const [kind, weight, priority, fraction, name, nothing] = await Promise.all([
      refused(['add', '--name', 'x', '--kind', 'openai']),
      refused([...add, '--weight', '0']),
      refused([...add, '--priority', String(2 ** 31)]),
      refused([...add, '--priority', '1.5']),
      refused(['add', '--name', 'n'.repeat(129), '--kind', 'openai-compatible']),
      refused(['update', 'x']),
    ]);
    expect(kind).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "error: option '--kind <kind>' argument 'openai' is invalid. Allowed choices are openai-compatible, anthropic, gemini, voyage, jina, cohere.\n",
    });
    expect(weight.stderr).toBe("error: option '--weight': must be >= 1\n");
    expect(priority.stderr).toBe("error: option '--priority': must be <= 2147483647\n");
    expect(fraction.stderr).toBe(
      "error: option '--priority <n>' argument '1.5' is invalid. must be a whole number\n",
    );
    expect(name.stderr).toBe("error: option '--name': must NOT have more than 128 characters\n");
    expect(nothing.stderr).toMatch(
      /^error: nothing to change: give one or more of --name, --kind, --base-url/,
    );
    for (const r of [weight, priority, fraction, name, nothing]) expect(r.code).toBe(1);
    // Six CLI processes at once, each compiling through tsx: on a loaded 2-core machine over 30 s.
  }, 120_000);
});
