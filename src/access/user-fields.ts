import { badRequest } from '../gateway/errors.js';
import { checkOneLine } from '../gateway/text-characters.js';

const USERNAME = /^[A-Za-z0-9_.@-]{1,64}$/;

export function validateUsername(name: string): void {
  if (!USERNAME.test(name))
    throw badRequest('username: 1..64 characters of letters, digits, _ . @ -', 'username');
}

export function validatePassword(pw: string): void {
  if (pw.length < 8 || pw.length > 256) throw badRequest('password: must be 8..256 characters', 'password');
}

/**
 * A display name as stored: trimmed, at most 128 characters (the column), one line of visible
 * text by the rule of catalog names (gateway/text-characters.ts): no control, invisible or bidi
 * override characters, since it is shown in the console and the request log beside other names.
 * Throws a 400 naming `display_name`.
 */
export function normalizeDisplayName(name: string): string {
  const v = name.trim();
  if ([...v].length > 128) throw badRequest('display_name: must be at most 128 characters', 'display_name');
  checkOneLine('display_name', v);
  return v;
}

/** Control characters, invisible format characters (zero-width spaces, bidi controls), lone surrogates. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}]/u;
/** One label of a host name: letters (any script), digits, marks and hyphens. */
const HOST_LABEL = /^[\p{L}\p{N}\p{M}-]+$/u;

/**
 * An email as stored: trimmed, '' for none (blank included), else one address: one `@` with text
 * on both sides, no whitespace, control or invisible characters, and a host name after the `@`
 * (dot-separated labels of letters, digits and hyphens, in any script). Deliberately not all of
 * RFC 5322: quoted local parts and `[address]` literals are refused, which no one signs up with.
 * The route caps the length (255, the column). Throws a 400 naming `email`.
 */
export function normalizeEmail(email: string): string {
  const v = email.trim();
  if (v === '') return '';
  if (/\s/u.test(v)) throw badRequest('email: must not contain whitespace', 'email');
  const hidden = HIDDEN.exec(v);
  if (hidden)
    throw badRequest(
      `email: must not contain control or invisible characters (found U+${hidden[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`,
      'email',
    );
  const parts = v.split('@');
  if (parts.length !== 2)
    throw badRequest('email: must be one address, with one @ (name@example.com)', 'email');
  const [local, domain] = parts as [string, string];
  if (local === '' || domain === '')
    throw badRequest('email: needs a name before and a domain after the @ (name@example.com)', 'email');
  if (!domain.split('.').every((label) => HOST_LABEL.test(label)))
    throw badRequest(
      'email: the domain after the @ must be a host name (letters, digits and hyphens, in labels separated by single dots)',
      'email',
    );
  return v;
}
