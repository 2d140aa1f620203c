import { describe, expect, it } from 'vitest';
import { addressKey } from './address-key.js';

describe('addressKey', () => {
  it('keys an IPv6 address by its /64, however it is written', () => {
    for (const ip of [
      '2001:db8:a:b::1',
      '2001:DB8:A:B:ffff:ffff:ffff:ffff',
      '2001:0db8:000a:000b::',
      'fe80::1%eth0',
    ])
      expect(addressKey(ip), ip).toBe(ip.startsWith('fe80') ? 'fe80:0:0:0::/64' : '2001:db8:a:b::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('2001:db8:a:c::1')).not.toBe(addressKey('2001:db8:a:b::1'));
  });

  it('keys IPv4 by the full address, IPv4-mapped IPv6 as the same client', () => {
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::FFFF:cb00:7109')).toBe('203.0.113.9');
    // NAT64 and other embedded forms are IPv6 clients of their own.
    expect(addressKey('64:ff9b::203.0.113.9')).toBe('64:ff9b:0:0::/64');
  });

  it('leaves what is no address as it is', () => {
    for (const s of ['', 'unknown', 'not:an:address', '1.2.3']) expect(addressKey(s)).toBe(s);
  });
});
