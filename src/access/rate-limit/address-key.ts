import { isIPv6 } from 'node:net';

/**
 * The client a per-address limit counts (sign-in, catalog search, anonymous catalog routes):
 * an IPv6 address by its /64 (`2001:db8:1:2::/64`), since one host, a home or a VM is usually
 * given a whole /64 and can use any address in it: keyed by the full address, a client rotating
 * through its own /64 had a fresh allowance with every request. An IPv4 address counts by the
 * full address, and so does an IPv4-mapped IPv6 one (`::ffff:203.0.113.9`, how a dual-stack socket
 * shows an IPv4 peer), as the same IPv4 client. Anything else (no address at all) is its own key.
 */
export function addressKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  if (
    groups[0] === 0 &&
    groups[1] === 0 &&
    groups[2] === 0 &&
    groups[3] === 0 &&
    groups[4] === 0 &&
    groups[5] === 0xffff
  )
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  return `${groups[0]!.toString(16)}:${groups[1]!.toString(16)}:${groups[2]!.toString(16)}:${groups[3]!.toString(16)}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (a zone `%eth0` dropped), or undefined when it is none. */
function ipv6Groups(address: string): number[] | undefined {
  const zone = address.indexOf('%');
  const ip = zone >= 0 ? address.slice(0, zone) : address;
  if (!isIPv6(ip)) return undefined;
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const parse = (part: string | undefined): number[] => {
    if (!part) return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (g.includes('.')) {
        // An IPv4 tail (`::ffff:203.0.113.9`): its two groups.
        const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const front = parse(head);
  const back = parse(tail);
  const zeros = tail === undefined ? 0 : 8 - front.length - back.length;
  return [...front, ...new Array<number>(zeros).fill(0), ...back];
}
