import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../bench/procs.js';
import { compileBody, describeAjvError, splitForJit } from '../../src/http/validation.js';
import { ChatRequestSchema } from '../../src/http/wire/chat-request-schema.js';

const run = promisify(execFile);

describe('request-body validators V8 can optimize', () => {
  // Ajv compiled the chat request's schema into one function of 121 KB of bytecode, which V8's
  // optimizing compiler refuses (over 60 KB): it ran unoptimized on every request, ~10x slower.
  it('every function ajv makes for a hot body schema is optimized by TurboFan', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--allow-natives-syntax', '--import', 'tsx', 'test/helpers/validator-jit-child.ts'],
      { cwd: ROOT, timeout: 60_000 },
    );
    const report = JSON.parse(stdout) as Record<string, { functions: number; refused: string[] }>;
    expect(Object.keys(report).sort()).toEqual(['chat', 'count_tokens', 'messages', 'responses']);
    for (const [name, r] of Object.entries(report))
      expect({ name, refused: r.refused }).toEqual({ name, refused: [] });
    // The chat schema is split: its root alone would be too big.
    expect(report.chat!.functions).toBeGreaterThan(1);
  }, 60_000);

  it('splitting leaves what is valid and what each error says unchanged', () => {
    const bodies: unknown[] = [
      { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
      { model: 'm', messages: [] },
      { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', cache_control: 1 }] }] },
      { model: 'm', messages: [{ role: 'user', content: [{ type: 'refusal', refusal: 'no' }] }] },
      { model: 'm', messages: [{ role: 'assistant', content: null, tool_calls: [{ type: 'function' }] }] },
      {
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: '' } }],
      },
      {
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        tool_choice: { type: 'function', function: {} },
      },
      { model: 'm', messages: [{ role: 'user', content: 'x' }], provider: { sort: { by: 'cheapest' } } },
      { model: 'm', messages: [{ role: 'user', content: 'x' }], provider: { max_price: { prompt: '1,5' } } },
      {
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { name: 'a b' } },
      },
      {
        model: 'm',
        messages: [{ role: 'tool', tool_call_id: 'c', content: 'x', cache_control: { type: 'bogus' } }],
        tools: [{ type: 'function', function: { name: 'f' }, cache_control: 'ephemeral' }],
      },
      { model: 'm', messages: [{ role: 'user', content: 'x' }], stop: [1] },
      { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 3 },
    ];
    const split = compileBody(ChatRequestSchema);
    const whole = compileBody(ChatRequestSchema, Number.POSITIVE_INFINITY);
    expect((splitForJit(ChatRequestSchema) as { $defs?: object }).$defs).toBeDefined();
    expect(splitForJit(ChatRequestSchema, Number.POSITIVE_INFINITY)).toBe(ChatRequestSchema);
    for (const body of bodies) {
      const a = structuredClone(body);
      const b = structuredClone(body);
      const okSplit = split(a);
      expect(okSplit).toBe(whole(b));
      if (!okSplit)
        expect(describeAjvError(split.errors!, 'body')).toEqual(describeAjvError(whole.errors!, 'body'));
    }
  });
});
