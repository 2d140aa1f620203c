import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Per-response work of the app's own modules (metrics, rate-limit bookkeeping, cache
 * invalidation), run from one onResponse hook. Each Fastify hook costs an iteration of its hook
 * runner, and `request.routeOptions` builds a fresh object on every read: one hook reads the
 * route template once and hands it to every tap.
 */
export type ResponseTap = (request: FastifyRequest, reply: FastifyReply, route: string | undefined) => void;

export class ResponseTaps {
  private readonly taps: ResponseTap[] = [];

  add(tap: ResponseTap): void {
    this.taps.push(tap);
  }

  /** The onResponse hook (callback style: no promise per response). */
  readonly hook = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const route = request.routeOptions.url;
    for (const tap of this.taps) {
      try {
        tap(request, reply, route);
      } catch (err) {
        // The response is sent; one module's failure must not skip the others.
        request.log.error({ err }, 'onResponse tap failed');
      }
    }
    done();
  };
}
