import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Base62 string from `bytes` random bytes (rejection sampling keeps it unbiased). */
export function randomToken(length = 48): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

/** Secrets are stored as SHA-256: they are high-entropy, so a slow hash adds nothing. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** `sk-` + 48 base62 chars (~285 bits). */
export function newApiKey(): { secret: string; hash: string; prefix: string } {
  const secret = `sk-${randomToken(48)}`;
  return { secret, hash: hashSecret(secret), prefix: secret.slice(0, 10) };
}

/** Personal access tokens for management calls; a distinct prefix so they never pass as keys. */
export function newAccessToken(): { secret: string; hash: string; prefix: string } {
  const secret = `mgt-${randomToken(40)}`;
  return { secret, hash: hashSecret(secret), prefix: secret.slice(0, 10) };
}

export function newSessionId(): { secret: string; hash: string } {
  const secret = randomToken(43);
  return { secret, hash: hashSecret(secret) };
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
