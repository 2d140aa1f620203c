import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../errors.js';
import { SseDecoder, type SseEvent } from './sse.js';

const STREAM =
  ': OPENROUTER PROCESSING\n\n' +
  'event: message_start\r\ndata: {"a":"é世"}\r\n\r\n' +
  'data: line one\ndata: line two\n\n' +
  'id: 7\rdata:no-space\r\r' +
  'data: {"emoji":"😀"}\n\n' +
  'data: [DONE]\n\n';

const EXPECTED: SseEvent[] = [
  { event: 'message_start', data: '{"a":"é世"}', id: undefined },
  { event: undefined, data: 'line one\nline two', id: undefined },
  { event: undefined, data: 'no-space', id: '7' },
  { event: undefined, data: '{"emoji":"😀"}', id: '7' },
  { event: undefined, data: '[DONE]', id: '7' },
];

function decodeBytes(chunks: Uint8Array[]): { events: SseEvent[]; comments: number } {
  const d = new SseDecoder();
  const events = chunks.flatMap((c) => d.push(c));
  events.push(...d.end());
  return { events, comments: d.comments };
}

describe('SseDecoder', () => {
  const bytes = new TextEncoder().encode(STREAM);

  it('decodes LF, CRLF and CR line ends, comments, multi-line data and ids', () => {
    const { events, comments } = decodeBytes([bytes]);
    expect(events).toEqual(EXPECTED);
    expect(comments).toBe(1);
  });

  it('gives the same events when the bytes are split at every offset', () => {
    for (let i = 1; i < bytes.length; i++) {
      const { events } = decodeBytes([bytes.subarray(0, i), bytes.subarray(i)]);
      expect(events, `split at byte ${i}`).toEqual(EXPECTED);
    }
  });

  it('gives the same events one byte at a time and for string chunks split anywhere', () => {
    expect(decodeBytes([...bytes].map((b) => Uint8Array.of(b))).events).toEqual(EXPECTED);
    for (let i = 1; i < STREAM.length; i++) {
      const d = new SseDecoder();
      const events = [...d.push(STREAM.slice(0, i)), ...d.push(STREAM.slice(i)), ...d.end()];
      expect(events, `split at char ${i}`).toEqual(EXPECTED);
    }
  });

  it('discards an event cut off by the end of the body', () => {
    const d = new SseDecoder();
    expect(d.push('data: {"complete":true}\n\ndata: {"cut')).toHaveLength(1);
    expect(d.end()).toEqual([]);
  });

  it('strips a leading BOM and ignores unknown fields and retry', () => {
    const d = new SseDecoder();
    expect(d.push('\uFEFFretry: 100\nfoo: bar\ndata: x\n\n')).toEqual([
      { event: undefined, data: 'x', id: undefined },
    ]);
  });

  it("reads an `error:` field (older llama.cpp servers) as an event of type error, after the event's data", () => {
    const d = new SseDecoder();
    expect(d.push('error: {"code":500}\n\ndata: [DONE]\n\n')).toEqual([
      { event: 'error', data: '{"code":500}', id: undefined },
      { event: undefined, data: '[DONE]', id: undefined },
    ]);
    expect(d.push('data: x\nerror: e\n\n')).toEqual([
      { event: undefined, data: 'x', id: undefined },
      { event: 'error', data: 'e', id: undefined },
    ]);
    // Cut before its blank line: incomplete, discarded like any event.
    expect(d.push('error: {"co')).toEqual([]);
    expect(d.end()).toEqual([]);
  });

  it('reads a line without a colon as a field with an empty value', () => {
    const d = new SseDecoder();
    expect(d.push('data\nevent\ndata\n\n')).toEqual([{ event: '', data: '\n', id: undefined }]);
  });

  it('searches each character for line ends once, however finely a long line is split', () => {
    // A 2 MB line in 1 KiB pushes: searching the whole buffer again on every push (as the decoder
    // once did) is ~2,000 searches of a megabyte on average, billions of characters.
    const line = `data: "${'x'.repeat(2 * 1024 * 1024)}"\n\n`;
    const bytes = new TextEncoder().encode(line);
    const d = new SseDecoder();
    const events: SseEvent[] = [];
    const searched = searches(['\n', '\r'], () => {
      for (let i = 0; i < bytes.length; i += 1024) events.push(...d.push(bytes.subarray(i, i + 1024)));
    });
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toHaveLength(line.length - 8);
    // Once for CR, once for LF: the count also proves the searches were seen at all.
    expect(searched).toBeGreaterThanOrEqual(line.length);
    expect(searched).toBeLessThanOrEqual(2 * line.length);
  });

  it('searches a push for colons once, however many of its lines have none', () => {
    // 20,000 lines without a colon, then an event: searching each line for its colon ran on to
    // the event's, ~200 M characters here.
    const text = `${'x\n'.repeat(20_000)}data: y\n\n`;
    const d = new SseDecoder();
    let events: SseEvent[] = [];
    const searched = searches([':'], () => {
      events = d.push(text);
    });
    expect(events).toEqual([{ event: undefined, data: 'y', id: undefined }]);
    expect(searched).toBeGreaterThanOrEqual(40_000);
    expect(searched).toBeLessThanOrEqual(2 * text.length);
  });

  it('throws bad_response once a line still arriving passes the event limit, holding no more', () => {
    const d = new SseDecoder(100_000);
    const piece = 'x'.repeat(10_000);
    expect(d.push('data: ')).toEqual([]);
    let pushed = 6;
    let thrown: unknown;
    while (thrown === undefined && pushed < 1_000_000) {
      try {
        d.push(piece);
        pushed += piece.length;
      } catch (err) {
        thrown = err;
      }
    }
    // The push that took it past 100,000 characters threw: before it, it held at most that.
    expect(pushed).toBe(90_006);
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect(thrown).toMatchObject({ kind: 'bad_response' });
    // It let the line go and takes nothing more.
    expect(() => d.push(piece)).toThrow(thrown as Error);
    expect(() => d.end()).toThrow(thrown as Error);
  });

  it('counts what each piece of a line costs beyond its characters: one arriving a byte at a time is cut early', () => {
    const d = new SseDecoder(100_000);
    d.push('data: ');
    let pushed = 0;
    expect(() => {
      for (; pushed < 100_000; pushed++) d.push('x');
    }).toThrow(UpstreamError);
    expect(pushed).toBeLessThan(10_000);
  });

  it('counts every data line of an event against the limit, and takes one exactly at it', () => {
    const exact = new SseDecoder(1000);
    expect(exact.push(`data: ${'a'.repeat(500)}\ndata: ${'b'.repeat(500)}\n\n`)).toHaveLength(1);
    const d = new SseDecoder(1000);
    expect(() => d.push(`data: ${'a'.repeat(500)}\n`.repeat(3))).toThrow(/larger than the gateway's limit/);
  });

  it('returns the events before an oversized one in the same push, then throws', () => {
    const d = new SseDecoder(1000);
    expect(d.push(`data: a\n\ndata: ${'x'.repeat(2000)}\n\ndata: b\n\n`)).toEqual([
      { event: undefined, data: 'a', id: undefined },
    ]);
    expect(() => d.push('data: c\n\n')).toThrow(UpstreamError);
  });
});

/**
 * Characters that `String.prototype.indexOf` looked at while searching for one of `targets`
 * during `run`: the decoder's work in its scans, counted instead of timed.
 */
function searches(targets: string[], run: () => void): number {
  const indexOf = String.prototype.indexOf;
  let searched = 0;
  String.prototype.indexOf = function (this: string, search: string, from?: number): number {
    const at = indexOf.call(this, search, from);
    if (targets.includes(search)) searched += (at === -1 ? this.length : at + 1) - (from ?? 0);
    return at;
  };
  try {
    run();
  } finally {
    String.prototype.indexOf = indexOf;
  }
  return searched;
}
