import type { FastifyBaseLogger } from 'fastify';
import type { RedisClient } from '../../store/redis.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';

/** Redis-backed (shared by all instances) when a client is configured, else per process. */
export function createRateLimiter(
  redis: RedisClient | null,
  keyPrefix: string,
  log?: FastifyBaseLogger,
): RateLimiter {
  const memory = new MemoryRateLimiter();
  return redis ? new RedisRateLimiter(redis, keyPrefix, memory, log) : memory;
}
