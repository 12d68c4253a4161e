import ipaddr from 'ipaddr.js';

/**
 * The rate-limit key of a client address. The app runs with proxy: false, so this is the socket's
 * remote address and X-Forwarded-For is never read (a client could write any value there). An IPv4
 * address (also when IPv4-mapped) counts alone; an IPv6 client counts by its /64, the block one
 * subscriber usually holds, so rotating addresses inside it buys nothing.
 */
export function clientIpKey(remoteAddress: string): string {
  if (!ipaddr.isValid(remoteAddress)) return remoteAddress;
  const address = ipaddr.process(remoteAddress);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
