import ipaddr from 'ipaddr.js';

/**
 * Which network addresses the gateway may fetch client-supplied URLs from. Only globally
 * routable unicast is allowed by default: anything ipaddr.js classifies otherwise (private,
 * loopback, link-local incl. 169.254.169.254 metadata, CGNAT, unique-local, multicast,
 * unspecified, reserved (IPv6 ::/8 too), and IPv6 forms that embed IPv4 like 6to4/NAT64 or the
 * IPv4-compatible ::7f00:1) is refused, because those reach the gateway's own network rather
 * than the internet.
 */
export interface AddressPolicy {
  /** A reason when the address is refused, null when it may be connected to. */
  check(address: string, hostname?: string): string | null;
  /** Whether the hostname itself is on the allow-list (then its addresses are not checked). */
  hostAllowed(hostname: string): boolean;
}

/**
 * allowList entries: an IP (`127.0.0.1`), a CIDR (`10.1.0.0/16`), a host name
 * (`images.internal`) or a wildcard suffix (`*.internal`). Invalid entries throw, so a typo in
 * config fails at startup instead of silently allowing nothing.
 */
export function createAddressPolicy(allowList: readonly string[] = []): AddressPolicy {
  const cidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  for (const raw of allowList) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry.includes('/')) cidrs.push(ipaddr.parseCIDR(entry));
    else if (ipaddr.isValid(stripBrackets(entry))) {
      const ip = ipaddr.parse(stripBrackets(entry));
      cidrs.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
    } else if (entry.startsWith('*.')) suffixes.push(entry.slice(1));
    else if (/^[a-z0-9.-]+$/.test(entry)) hosts.add(entry.replace(/\.$/, ''));
    else throw new Error(`invalid image fetch allow-list entry "${raw}"`);
  }

  const inAllowedCidr = (ip: ipaddr.IPv4 | ipaddr.IPv6): boolean =>
    cidrs.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));

  return {
    hostAllowed(hostname) {
      const h = hostname.toLowerCase().replace(/\.$/, '');
      return hosts.has(h) || suffixes.some((s) => h.endsWith(s));
    },
    check(address) {
      const text = stripBrackets(address);
      if (!ipaddr.isValid(text)) return `"${address}" is not an IP address`;
      const parsed = ipaddr.parse(text);
      // ::ffff:10.0.0.1 reaches 10.0.0.1; judge (and allow-list) the IPv4 address it carries.
      const ip =
        parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
          ? (parsed as ipaddr.IPv6).toIPv4Address()
          : parsed;
      if (inAllowedCidr(ip) || inAllowedCidr(parsed)) return null;
      const range = ip.range();
      // ::/8 is reserved; it holds the deprecated IPv4-compatible form (::7f00:1 for 127.0.0.1),
      // which ipaddr.js calls unicast. No global address lives there.
      if (range === 'unicast' && ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts[0]! < 0x100)
        return `address ${ip.toString()} is ${describe('reserved')}`;
      return range === 'unicast' ? null : `address ${ip.toString()} is ${describe(range)}`;
    },
  };
}

function stripBrackets(s: string): string {
  return s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
}

function describe(range: string): string {
  switch (range) {
    case 'private':
    case 'uniqueLocal':
      return 'a private address';
    case 'loopback':
      return 'a loopback address';
    case 'linkLocal':
      return 'a link-local address';
    case 'carrierGradeNat':
      return 'a carrier-grade NAT address';
    case 'unspecified':
      return 'the unspecified address';
    case 'multicast':
      return 'a multicast address';
    default:
      return `not a public address (${range})`;
  }
}
