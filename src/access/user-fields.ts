import { badRequest } from '../gateway/errors.js';
import { checkOneLine } from '../gateway/text-characters.js';
import { charLength } from '../store/column-bounds.js';

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

/**
 * The name of an API key or an access token as stored: trimmed, 1..128 characters (the column),
 * one line of visible text by the rule of display names: it is shown in the console's lists, the
 * request log (`key_name`) and usage charts beside other names. Throws a 400 naming `name`.
 */
export function normalizeCredentialName(name: string): string {
  const v = name.trim();
  if (v.length < 1 || charLength(v) > 128) throw badRequest('name: must be 1..128 characters', 'name');
  checkOneLine('name', v);
  return v;
}

/**
 * A user's `default_model` as stored: a model id, trimmed as every model id the gateway takes is
 * (a key's allow-list entries, a channel's models), '' (or blanks) for none, and one line of
 * visible text by the rule of display names: a line break or a bidi override in it would be
 * echoed into the 404 of a request that names no model, and the console shows it. Throws a 400
 * naming `default_model`.
 */
export function normalizeDefaultModel(model: string): string {
  const v = model.trim();
  checkOneLine('default_model', v);
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
