export function formatDate(unixSeconds: number | null | undefined): string {
  if (!unixSeconds) return '—';
  return new Date(unixSeconds * 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatDay(unixSeconds: number | null | undefined): string {
  if (!unixSeconds) return '—';
  return new Date(unixSeconds * 1000).toLocaleDateString(undefined, { dateStyle: 'medium' });
}

export function formatNumber(n: number | null | undefined): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  return n.toLocaleString();
}

/**
 * USD with the console's one rule for money: at least two decimals ($1.50, $0.00), more only for
 * what they carry (up to four under $100, three significant digits below a cent: $0.0123,
 * $0.005, $0.000001), never a trailing zero past the second decimal.
 */
export function formatUsd(value: number | string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  const n = typeof value === 'string' ? Number(value) : value;
  if (!Number.isFinite(n)) return '—';
  const a = Math.abs(n);
  const decimals = a === 0 ? 2 : a < 0.01 ? Math.min(20, 2 - Math.floor(Math.log10(a))) : a < 100 ? 4 : 2;
  const text = a.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1');
  return `${n < 0 ? '-' : ''}$${text}`;
}

/** Per-token USD price as per-million, the way people compare models ($0.80/M, $0.075/M). */
export function perMillion(price: string | undefined): string {
  if (!price) return '—';
  const n = Number(price);
  if (!Number.isFinite(n)) return '—';
  return `${formatUsd(n * 1_000_000)}/M`;
}

export function splitList(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** datetime-local value <-> unix seconds, in the browser's time zone. */
export function toUnix(local: string): number | null {
  if (!local) return null;
  const t = new Date(local).getTime();
  return Number.isNaN(t) ? null : Math.floor(t / 1000);
}

/**
 * The last second of the minute a `datetime-local` input names: the end of a period "to 10:05"
 * takes what happened during 10:05, as a reader means it (the input has no seconds).
 */
export function toUnixEnd(local: string): number | null {
  const t = toUnix(local);
  return t === null ? null : t - (t % 60) + 59;
}

export function toLocalInput(unixSeconds: number | null | undefined): string {
  if (!unixSeconds) return '';
  const d = new Date(unixSeconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * A `datetime-local` value as the UTC minute it names, for a page's URL (`2030-01-02T09:00Z`):
 * a shared link names the same period in every time zone. '' for ''.
 */
export function toUtcParam(local: string): string {
  const t = toUnix(local);
  return t === null ? '' : `${new Date(t * 1000).toISOString().slice(0, 16)}Z`;
}

/** Back from a URL: the `datetime-local` value (in this browser's zone) of a UTC minute; '' for anything else. */
export function fromUtcParam(param: string | null): string {
  if (!param || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z$/.test(param)) return '';
  const t = Date.parse(param);
  return Number.isNaN(t) ? '' : toLocalInput(t / 1000);
}

export function categoryLabel(c: string): string {
  return c ? c[0].toUpperCase() + c.slice(1) : c;
}

/** Length in characters (code points), as the server counts it: an emoji is one, not two. */
export function charLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** The first `max` characters (code points) of `text`, never half of a surrogate pair. */
export function clipChars(text: string, max: number): string {
  return charLength(text) <= max ? text : Array.from(text).slice(0, max).join('');
}

/** A user as a person reads them: display name with the login name, else the login name. */
export function userName(u: { username: string; display_name?: string }): string {
  return u.display_name && u.display_name !== u.username ? `${u.display_name} (${u.username})` : u.username;
}
