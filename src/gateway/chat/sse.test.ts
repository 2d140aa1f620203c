import { describe, expect, it } from 'vitest';
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
});
