import type { Config } from '../config/schema.js';

/**
 * How much body a route reads (docs/configuration.md "Decisions"). `/v1` routes set their own
 * (`server.chat_body_limit_bytes`, `server.embedding_body_limit_bytes`); every other route takes
 * `server.body_limit_bytes` (1 MiB): no management request needs more (the largest, a channel
 * with thousands of models or an app with a 20,000-character description, is a few hundred KiB),
 * and a body is parsed whole on the event loop, so a megabytes-large one stalls every request.
 */

/**
 * The routes anyone may call without credentials (sign-in, sign-out, counting a download) read
 * at most this much (or `server.body_limit_bytes` if lower): their bodies are a username and a
 * password, or nothing.
 */
export const ANONYMOUS_BODY_LIMIT = 64 * 1024;

export const anonymousBodyLimit = (config: Config): number =>
  Math.min(ANONYMOUS_BODY_LIMIT, config.server.body_limit_bytes);
