import { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { GatewayError } from '../gateway/errors.js';

/**
 * Request bodies sent with a `Content-Encoding` (docs/configuration.md): `gzip`, `deflate` and
 * `br` are decoded as they arrive, the route's body limit applying to the DECODED size (a zip
 * bomb is a 413 once the limit is passed, not after inflating it all); a stream that does not
 * decode is a 400 naming its encoding; any other encoding is a 415. Before, a gzip body reached
 * the JSON parser as it was, and was answered "malformed JSON".
 * A request without the header costs a header lookup: no stream, no allocation.
 */
const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

type Payload = NodeJS.ReadableStream & { receivedEncodedLength?: number };

/** Fastify `preParsing` hook: the payload as sent, or a stream of its decoded bytes. */
export function decodeBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: Payload,
  done: (err: Error | null, payload?: Payload) => void,
): void {
  const given = request.headers['content-encoding'];
  if (given === undefined) return void done(null, payload);
  const name = given.trim().toLowerCase();
  if (name === '' || name === 'identity') return void done(null, payload);
  const make = DECODERS[name];
  if (!make)
    return void done(
      new GatewayError(415, `content-encoding: must be gzip, deflate, br or identity (got ${given})`),
    );
  const limit = request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY;
  const decoder = make();
  let decoded = 0;
  // What the body parser reads: counts the decoded bytes against the limit, and says how many
  // encoded bytes came (`receivedEncodedLength`, for Fastify's content-length check).
  const out: Transform & { receivedEncodedLength?: number } = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      decoded += chunk.length;
      if (decoded > limit) return cb(new GatewayError(413, 'body: request body is too large'));
      cb(null, chunk);
    },
  });
  out.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    out.receivedEncodedLength! += chunk.length;
  });
  payload.on('error', (err) => out.destroy(err));
  decoder.on('error', (err) =>
    out.destroy(new GatewayError(400, `body: malformed ${name} content-encoding (${err.message})`)),
  );
  // Past the limit (or on any failure) nothing more is inflated.
  out.on('error', () => {
    payload.unpipe(decoder);
    decoder.destroy();
  });
  payload.pipe(decoder).pipe(out);
  done(null, out);
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `onRoute` hook: routes that may take a body decode it first; others (GET) get no hook at all. */
export function addBodyDecoding(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!methods.some((m) => BODY_METHODS.has(m))) return;
  const own = route.preParsing;
  route.preParsing = own
    ? [decodeBody as never, ...(Array.isArray(own) ? own : [own])]
    : (decodeBody as never);
}
