import { createRequire } from 'node:module';

/**
 * The o200k tokenizer, loaded on first use. Its tables cost ~70 MB of memory, and most
 * requests never need them (upstreams report usage; quota reservations use a cheap bound), so
 * a gateway that only proxies never pays for them.
 */
interface Encoding {
  countTokens(text: string, opts?: { disallowedSpecial?: Set<string> }): number;
  encode(text: string, opts?: { disallowedSpecial?: Set<string> }): number[];
  decode(tokens: number[]): string;
}

let encoding: Encoding | undefined;
const load = (): Encoding => {
  encoding ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Encoding;
  return encoding;
};

// Special-token text typed by users is ordinary text for counting purposes; never throw on it.
const PLAIN = { disallowedSpecial: new Set<string>() };

export const countTokens = (text: string): number =>
  text.length === 0 ? 0 : load().countTokens(text, PLAIN);
export const encode = (text: string): number[] => load().encode(text, PLAIN);
export const decode = (tokens: number[]): string => load().decode(tokens);
