import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';
import type { ApiContext } from '../context';

/**
 * The rate-limit key of a client address. An IPv4 address (also when IPv4-mapped) counts alone; an
 * IPv6 client counts by its /64, the block one subscriber usually holds, so rotating addresses inside
 * it buys nothing.
 */
export function clientIpKey(remoteAddress: string): string {
  if (!ipaddr.isValid(remoteAddress)) return remoteAddress;
  const address = ipaddr.process(remoteAddress);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

/** The rate-limit key of a request's client (see `clientAddress`). */
export type ClientIp = (ctx: ApiContext) => string;

/**
 * The client of a request. The app runs with proxy: false and X-Forwarded-For is read only here, and
 * only when the socket's peer is one of `trustedProxies`: then the client is the nearest address in
 * the header that no trusted proxy added (proxy-addr walks it from the right), since a client can
 * write any value into the part before its proxy's. Otherwise, or with no trusted proxy, the socket's
 * address.
 *
 * The header from any other peer is ignored, not refused: a client (or a forward proxy of its own)
 * may send one. But a proxy left out of TRUSTED_PROXIES looks just like that and makes every client
 * share its address, so the first such request of the process is logged for the operator to see.
 */
export function clientAddress(trustedProxies: readonly string[]): ClientIp {
  const trust = proxyaddr.compile([...trustedProxies]);
  let warned = false;
  return (ctx) => {
    const peer = ctx.req.socket.remoteAddress;
    if (!peer) return '';
    const trusted = trustedProxies.length > 0 && trust(peer, 0);
    if (!trusted && !warned && ctx.get('X-Forwarded-For')) {
      warned = true;
      ctx.state.log?.warn(
        { peer },
        'X-Forwarded-For from a peer TRUSTED_PROXIES does not name: ignored, the peer counts as the client (if it is your proxy, add it)',
      );
    }
    return clientIpKey(trusted ? proxyaddr(ctx.req, trust) : peer);
  };
}
