import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  pw: string,
  salt: Buffer,
  len: number,
  opts: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/**
 * Cost of new hashes. scrypt needs 128 * N * r bytes, allocated in one block by OpenSSL on a
 * libuv pool thread. At N = 2^14 that block is 16 MB: glibc serves the first one with mmap and,
 * when it is freed, raises its mmap threshold to that size, so every later hash is served from
 * the pool thread's malloc arena and its 16 MB stay resident for good (one block per pool
 * thread, up to 64 MB). At N = 2^15 the block (32 MB) is above glibc's largest dynamic
 * threshold, so it is always mmap-ed and returned when freed. It also doubles the work an
 * attacker pays per guess (~90 ms per hash here).
 */
const N = 32768;
const R = 8;
const P = 1;
const LEN = 32;
const MAXMEM = 64 * 1024 * 1024;

/** `scrypt$N$r$p$salt$hash` (base64), so parameters can be raised later without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, LEN, { N, r: R, p: P, maxmem: MAXMEM });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltB64, hashB64] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hashB64, 'base64');
  const actual = await scryptAsync(password, Buffer.from(saltB64, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAXMEM,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Whether a stored hash was made with weaker parameters than new hashes get (rehash on sign-in). */
export function needsRehash(stored: string): boolean {
  const [kind, n, r, p] = stored.split('$');
  return kind !== 'scrypt' || Number(n) < N || Number(r) < R || Number(p) < P;
}
