import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChildLogger } from './lazy-child-logger.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  return { lines, logger: pino({ level: 'warn' }, stream) };
}

describe('lazyChildLogger', () => {
  it('writes what the parent level shows, with the bindings, and nothing below it', () => {
    const { lines, logger } = capture();
    const log = lazyChildLogger(logger, { reqId: 'r1' }, {});
    log.info('hidden');
    log.warn({ a: 1 }, 'shown');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId: 'r1', a: 1, msg: 'shown' });
  });

  it('a route with its own log level logs at that level', () => {
    const { lines, logger } = capture();
    const log = lazyChildLogger(logger, { reqId: 'r2' }, { level: 'info' });
    log.info('route-level info');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId: 'r2', msg: 'route-level info' });
  });
});
