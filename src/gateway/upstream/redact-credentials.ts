import { UpstreamError } from '../errors.js';

/** What a channel's credentials are replaced with in the error text clients see. */
export const REDACTED = '[redacted]';

/**
 * Values shorter than this are not looked for: a header such as `x-team: a` would otherwise turn
 * every `a` of a message into `[redacted]`. Credentials are far longer.
 */
const MIN_SECRET_LENGTH = 8;

/** What an upstream is sent that it may say back: a channel's keys and its header values. */
export interface CredentialSource {
  keys?: readonly string[];
  settings?: { headers?: unknown };
}

/**
 * `text` with each of the channel's keys and `settings.headers` values replaced by `[redacted]`.
 * An upstream that says back what it was sent (`your header was Bearer sk-...`) in a 400 or 500
 * would otherwise hand the channel's credential, word for word, to any API-key user, though the
 * console masks it even from admins. Only for error text: never on the path of an answer.
 */
export function redactCredentials(text: string, source: CredentialSource): string {
  let out = text;
  for (const secret of secretsOf(source)) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/** `err` with its message redacted (`redactCredentials`), in place; other errors as they are. */
export function redactUpstreamError<E>(err: E, source: CredentialSource): E {
  if (err instanceof UpstreamError) {
    const message = redactCredentials(err.message, source);
    if (message !== err.message) err.message = message;
  }
  return err;
}

/** Longest first, so a key that contains another is replaced whole. */
function secretsOf(source: CredentialSource): string[] {
  const out = (source.keys ?? []).filter((k) => k.length >= MIN_SECRET_LENGTH);
  const headers = source.settings?.headers;
  if (headers && typeof headers === 'object')
    for (const v of Object.values(headers))
      if (typeof v === 'string' && v.trim().length >= MIN_SECRET_LENGTH) out.push(v.trim());
  return out.sort((a, b) => b.length - a.length);
}
