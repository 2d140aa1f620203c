import { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { GatewayError } from '../gateway/errors.js';

/**
 * Request bodies sent with a `Content-Encoding` (docs/configuration.md): `gzip`, `deflate` and
 * `br` are decoded as they arrive, the route's body limit applying to the DECODED size (a zip
 * bomb is a 413 once the limit is passed, not after inflating it all) and the expansion bounded
 * (MAX_EXPANSION below); a stream that does not
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

/**
 * A compressed body past 1 MiB decoded may be at most 100 times the bytes sent (a zip bomb is a
 * 413 after 1 MiB, not at the /v1 limits of 32 and 64 MiB, which a few dozen bytes of brotli
 * reached). Real bodies stay far below it: JSON text compresses some 5 to 20 times, base64 images
 * hardly at all; only a body of one character repeated goes past, and it can be sent as it is.
 */
export const FREE_DECODED_BYTES = 1024 * 1024;
export const MAX_EXPANSION = 100;

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
  let encoded = 0;
  // What the body parser reads: counts the decoded bytes against the limit and against what was
  // sent, and says how many encoded bytes came (`receivedEncodedLength`, for Fastify's
  // content-length check). The decoder only ever has the bytes received so far to inflate.
  const out: Transform & { receivedEncodedLength?: number } = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      decoded += chunk.length;
      if (decoded > limit) return cb(new GatewayError(413, 'body: request body is too large'));
      if (decoded > FREE_DECODED_BYTES && decoded > MAX_EXPANSION * encoded)
        return cb(
          new GatewayError(
            413,
            `body: the compressed request body expands more than ${MAX_EXPANSION} times; send it uncompressed`,
          ),
        );
      cb(null, chunk);
    },
  });
  out.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    encoded += chunk.length;
    out.receivedEncodedLength = encoded;
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
