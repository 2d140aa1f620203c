import type { FastifyBaseLogger } from 'fastify';

/**
 * Rounds start between this share of the interval and the whole of it after the last one ended,
 * so instances started together do not ask every upstream at the same moment.
 */
const JITTER = 0.2;
/**
 * A claimed round holds the others off for this share of the interval: less than the shortest
 * wait (1 - JITTER), so the instance that claimed is due again at its next tick, and the fleet
 * lists every channel once in 0.75 to 1 interval whichever instances are alive.
 */
const HOLD = 0.75;

export interface DiscoveryRefresh {
  /** No more rounds; the one under way is cut (its listings end unlogged) and waited for. */
  close(): Promise<void>;
}

/**
 * Lists the channels' models again every `intervalMs`, jittered, so an upstream's new models
 * and the facts read since a listing was stored arrive without a restart. One round at a time
 * (the next is scheduled when one ends), and one instance a round on a shared database: a round
 * runs only when `claim` wins it (ChannelsRepo.claimDiscoveryRound). A round that fails (its
 * claim, say, with the database away) is logged and the next one comes as usual; a channel
 * whose listing fails keeps its stored one (ChannelService.refreshModels).
 */
export function startDiscoveryRefresh(opts: {
  intervalMs: number;
  claim: (nowMs: number, roundMs: number) => Promise<boolean>;
  round: (signal: AbortSignal) => Promise<void>;
  log?: FastifyBaseLogger;
  random?: () => number;
}): DiscoveryRefresh {
  const random = opts.random ?? Math.random;
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const schedule = () => {
    if (stop.signal.aborted) return;
    timer = setTimeout(tick, Math.round(opts.intervalMs * (1 - JITTER * random())));
    timer.unref();
  };
  const tick = () => {
    running = (async () => {
      try {
        if (await opts.claim(Date.now(), Math.floor(opts.intervalMs * HOLD))) await opts.round(stop.signal);
      } catch (err) {
        if (!stop.signal.aborted) opts.log?.warn({ err }, 'model discovery refresh failed');
      }
    })().finally(() => {
      running = undefined;
      schedule();
    });
  };
  schedule();
  return {
    async close() {
      stop.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
