/**
 * Adapter + upstream client glue: the two calls route execution needs. Both throw UpstreamError for
 * an upstream failure (or the abort reason when the caller aborted) and never retry.
 *
 * `openChatStream` resolves once the upstream answered 2xx, before any event; a non-2xx answer
 * rejects (still nothing sent to the client, so the caller may fall back). Its events are read
 * a batch at a time (`ChatEventStream.next`, or one by one with `for await`). Failures after
 * that arrive as a final `{type:'error'}` event, which can still come before anything a client
 * must see (e.g. an Anthropic `overloaded_error` right after message_start and a ping): a caller
 * that has not written anything yet may treat it like a rejection and fall back.
 */
import type { ChatAdapter, UpstreamHeaders, UpstreamTarget } from '../../providers/types.js';
import type { ChatRequest, ChatResult } from '../chat/types.js';
import { UpstreamError } from '../errors.js';
import { type ChatEventStream, openEvents } from './event-stream.js';
import { type SendOptions, sharedUpstreamClient, type UpstreamClient } from './upstream-client.js';

export interface ChatCallOptions extends SendOptions {
  /** Defaults to the shared client. */
  client?: UpstreamClient;
}

const NOT_STREAMED = { stream: false } as const;
const STREAMED = { stream: true } as const;

export async function completeChat(
  adapter: ChatAdapter,
  req: ChatRequest,
  target: UpstreamTarget,
  opts: ChatCallOptions = {},
  /** Overrides `opts.signal`, so `opts` can be shared by all requests. */
  signal = opts.signal,
): Promise<ChatResult> {
  const http = adapter.buildChatRequest(req, target, NOT_STREAMED);
  const res = await (opts.client ?? sharedUpstreamClient()).sendText(http, opts, signal);
  try {
    return adapter.parseChatResponse(res.status, res.text, res.headers);
  } catch (cause) {
    // A body the parser did not foresee (a null content block, a null candidate) is garbage from
    // the upstream: a 502 and the next route, never the gateway's own 500. The stream decoders'
    // throws end their streams the same way (event-stream.ts).
    if (cause instanceof UpstreamError) throw cause;
    throw new UpstreamError('bad_response', 'unreadable upstream answer', {
      upstreamStatus: res.status,
      cause,
    });
  }
}

export async function openChatStream(
  adapter: ChatAdapter,
  req: ChatRequest,
  target: UpstreamTarget,
  opts: ChatCallOptions = {},
  /** Overrides `opts.signal`, so `opts` can be shared by all requests. */
  signal = opts.signal,
): Promise<ChatEventStream> {
  const http = adapter.buildChatRequest(req, target, STREAMED);
  const client = opts.client ?? sharedUpstreamClient();
  const decoder = adapter.createStreamDecoder(opts.maxEventBytes);
  const res = await openEvents(client, http, decoder, opts, signal);
  if (res.events === undefined) {
    if (res.status >= 200 && res.status < 300)
      throw jsonForAStream(adapter, res.status, res.text, res.headers);
    throw adapter.classifyError(res.status, res.text, res.headers);
  }
  return res.events;
}

/**
 * A 2xx JSON answer to a streamed request: its error, classified as the adapter reads a
 * non-streamed answer (a 200 with `{"error": {"code": 402}}` is a payment failure), or, for a
 * whole answer from a server that ignored `stream: true` (or a body cut at the error-body limit),
 * a bad answer: the next route is tried, as for any upstream failure before the first byte.
 */
function jsonForAStream(
  adapter: ChatAdapter,
  status: number,
  text: string,
  headers: UpstreamHeaders,
): unknown {
  try {
    adapter.parseChatResponse(status, text, headers);
  } catch (err) {
    if (err instanceof UpstreamError) return err;
  }
  return new UpstreamError('bad_response', 'upstream answered a streamed request with JSON, not a stream', {
    upstreamStatus: status,
  });
}

/** Model ids the upstream lists, or undefined when the adapter has no listing. */
export async function fetchUpstreamModels(
  adapter: ChatAdapter,
  target: UpstreamTarget,
  opts: ChatCallOptions = {},
): Promise<string[] | undefined> {
  if (!adapter.listModels) return undefined;
  const res = await (opts.client ?? sharedUpstreamClient()).sendText(
    adapter.listModels.request(target),
    opts,
  );
  if (res.status < 200 || res.status >= 300) throw adapter.classifyError(res.status, res.text, res.headers);
  try {
    return adapter.listModels.parse(res.text).map((m) => m.name);
  } catch (cause) {
    throw new UpstreamError('bad_response', 'unparseable model list', { upstreamStatus: res.status, cause });
  }
}
