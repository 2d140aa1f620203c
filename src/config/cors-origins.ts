/**
 * `server.cors_origins` as browsers write origins (src/http/cors.ts compares them as text):
 * `*`; `none` alone (CORS off, as an empty list, for the environment where an empty variable
 * counts as unset); or `scheme://host[:port]`, the host optionally starting with `*.` (any
 * subdomain). Scheme and host in lower case, a default port dropped, an international name in
 * its ASCII form and one trailing `/` dropped, as a browser sends them; a path, query,
 * credentials or another `*` is a problem, since such an entry would never match.
 */
export function checkCorsOrigins(entries: readonly unknown[]): { origins: string[]; problems: string[] } {
  const problems: string[] = [];
  const origins: string[] = [];
  const texts = entries.filter((e): e is string => typeof e === 'string').map((e) => e.trim());
  if (texts.includes('none')) {
    if (texts.length > 1) problems.push('none (CORS off) cannot be listed with origins');
    return { origins: [], problems };
  }
  for (const entry of texts) {
    const origin = normalOrigin(entry);
    if (typeof origin === 'string') origins.push(origin);
    else problems.push(`${JSON.stringify(entry.slice(0, 200))} ${origin.problem}`);
  }
  return { origins: [...new Set(origins)], problems };
}

const FORM =
  'write *, none, or origins as scheme://host[:port] (https://app.example.com, https://*.example.com)';

function normalOrigin(entry: string): string | { problem: string } {
  if (entry === '*') return '*';
  if (entry === 'null')
    return { problem: `is the origin of every sandboxed page and local file, not one site; ${FORM}` };
  const text = entry.endsWith('/') ? entry.slice(0, -1) : entry;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(\*\.)?([^/?#@\s*\\]+)$/.exec(text);
  if (!m) return { problem: `is not an origin (scheme://host[:port], no path); ${FORM}` };
  const scheme = m[1]!.toLowerCase();
  const wildcard = m[2] ?? '';
  let host = m[3]!;
  if (scheme === 'http' || scheme === 'https') {
    let url: URL;
    try {
      // A pattern's `*.` is parsed as a label, then put back.
      url = new URL(`${scheme}://${wildcard ? 'x.' : ''}${host}`);
    } catch {
      return { problem: `is not an origin (its host or port does not parse); ${FORM}` };
    }
    host = url.host;
    if (wildcard) host = host.slice(2);
  } else {
    // Browser extensions and app shells (chrome-extension://<id>, tauri://localhost): as written.
    if (!/^[A-Za-z0-9.-]+(?::\d{1,5})?$/.test(host))
      return { problem: `is not an origin (its host is not a name); ${FORM}` };
    host = host.toLowerCase();
  }
  return `${scheme}://${wildcard}${host}`;
}
