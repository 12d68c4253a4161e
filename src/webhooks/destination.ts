import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/**
 * Where webhooks may be sent. The spec forbids destinations on local or private networks
 * (`localPrivateDestinationsAllowed: false`); WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS lifts that (and the
 * https-only rule) for development and tests. The policy is always passed in, never read globally.
 */
export interface DestinationPolicy {
  allowPrivateDestinations: boolean;
  /**
   * `host:port` pairs an operator trusts though they are on a private network (a partner reached over
   * a private link; the production rehearsal's local receivers): WEBHOOKS_TRUSTED_DESTINATIONS. Exact
   * pairs only, no ranges; https is still required where private destinations are not allowed.
   */
  trustedDestinations?: readonly string[];
}

/** Whether the URL's host and port are one of the policy's trusted pairs. */
export function isTrustedDestination(url: URL, policy: DestinationPolicy): boolean {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return (policy.trustedDestinations ?? []).includes(`${hostOf(url).toLowerCase()}:${port}`);
}

export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'carrier_grade_nat'
  | 'link_local'
  | 'unique_local'
  | 'site_local'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'protocol_assignment'
  | 'ipv4_compatible'
  | 'tunnel'
  | 'invalid';

interface Range {
  bytes: number[];
  prefix: number;
  cls: Exclude<AddressClass, 'public'>;
}

const v4 = (a: string, prefix: number, cls: Range['cls']): Range => ({ bytes: a.split('.').map(Number), prefix, cls });

// IPv4 ranges that are not public unicast (IANA special-purpose registry). The cloud metadata address
// 169.254.169.254 is inside link-local; Alibaba's 100.100.100.200 inside carrier-grade NAT.
const V4_RANGES: Range[] = [
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'carrier_grade_nat'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link_local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'protocol_assignment'),
  v4('192.0.2.0', 24, 'documentation'),
  v4('192.88.99.0', 24, 'reserved'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'benchmarking'),
  v4('198.51.100.0', 24, 'documentation'),
  v4('203.0.113.0', 24, 'documentation'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('255.255.255.255', 32, 'broadcast'),
  v4('240.0.0.0', 4, 'reserved'),
];

const v6 = (hex: string, prefix: number, cls: Range['cls']): Range => ({ bytes: parseIPv6(hex) ?? [], prefix, cls });

// IPv6 ranges that are not public unicast. IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and
// 6to4 (2002::/16) addresses are judged by the IPv4 address they carry (see classifyAddress).
const V6_RANGES: Range[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('64:ff9b:1::', 48, 'private'),
  v6('100::', 64, 'reserved'),
  v6('2001:db8::', 32, 'documentation'),
  v6('2001::', 32, 'tunnel'), // Teredo: the real destination is hidden
  v6('2001::', 23, 'protocol_assignment'),
  v6('3fff::', 20, 'documentation'),
  v6('5f00::', 16, 'reserved'), // SRv6 SIDs
  v6('fc00::', 7, 'unique_local'), // includes AWS's IPv6 metadata address fd00:ec2::254
  v6('fe80::', 10, 'link_local'),
  v6('fec0::', 10, 'site_local'),
  v6('ff00::', 8, 'multicast'),
  v6('::', 96, 'ipv4_compatible'), // deprecated ::a.b.c.d
];

function inRange(bytes: number[], range: Range): boolean {
  if (bytes.length !== range.bytes.length) return false;
  let bits = range.prefix;
  for (let i = 0; i < bytes.length && bits > 0; i += 1) {
    const take = Math.min(8, bits);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false;
    bits -= take;
  }
  return true;
}

function parseIPv4(address: string): number[] | undefined {
  const parts = address.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.map(Number);
}

/** 16 bytes of an IPv6 address (zone id ignored), or undefined when it isn't one. */
export function parseIPv6(input: string): number[] | undefined {
  let address = (input.split('%')[0] ?? '').toLowerCase();
  const lastColon = address.lastIndexOf(':');
  if (lastColon < 0) return undefined;
  let tail: number[] = [];
  if (address.slice(lastColon + 1).includes('.')) {
    const q = parseIPv4(address.slice(lastColon + 1));
    if (!q) return undefined;
    tail = [((q[0] ?? 0) << 8) | (q[1] ?? 0), ((q[2] ?? 0) << 8) | (q[3] ?? 0)];
    address = address.slice(0, lastColon + 1);
    if (!address.endsWith('::')) address = address.slice(0, -1);
  }
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0] ?? '');
  const rest = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  const hex = (g: string) => parseInt(g, 16);
  let words: number[];
  if (halves.length === 2) {
    const fill = 8 - head.length - rest.length - tail.length;
    if (fill < 1) return undefined;
    words = [...head.map(hex), ...new Array<number>(fill).fill(0), ...rest.map(hex), ...tail];
  } else {
    words = [...head.map(hex), ...tail];
    if (words.length !== 8) return undefined;
  }
  return words.flatMap((w) => [(w >> 8) & 0xff, w & 0xff]);
}

/** Classifies one IP address; anything but 'public' is refused as a webhook destination. */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address.split('%')[0] ?? '');
  if (family === 4) {
    const bytes = parseIPv4(address);
    if (!bytes) return 'invalid';
    return V4_RANGES.find((r) => inRange(bytes, r))?.cls ?? 'public';
  }
  if (family === 6) {
    const bytes = parseIPv6(address);
    if (!bytes) return 'invalid';
    const embedded = embeddedIPv4(bytes);
    if (embedded) return classifyAddress(embedded);
    return V6_RANGES.find((r) => inRange(bytes, r))?.cls ?? 'public';
  }
  return 'invalid';
}

/** The IPv4 address inside an IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address. */
function embeddedIPv4(b: number[]): string | undefined {
  const isZero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (isZero(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12, 16).join('.');
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && isZero(4, 12)) return b.slice(12, 16).join('.');
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6).join('.');
  return undefined;
}

export class DestinationNotAllowedError extends Error {
  override name = 'DestinationNotAllowedError';
  readonly code = 'EDESTINATIONNOTALLOWED';

  constructor(
    readonly host: string,
    readonly reason: AddressClass | 'unresolvable',
    readonly address?: string,
  ) {
    super(
      reason === 'unresolvable'
        ? `destination host ${host} does not resolve`
        : `destination ${host}${address && address !== host ? ` (${address})` : ''} is a ${reason.replace(/_/g, ' ')} address; only public destinations are allowed`,
    );
  }
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function refusedAmong(host: string, addresses: string[]): DestinationNotAllowedError | undefined {
  for (const address of addresses) {
    const cls = classifyAddress(address);
    if (cls !== 'public') return new DestinationNotAllowedError(host, cls, address);
  }
  return undefined;
}

export type HostResolver = (host: string) => Promise<string[]>;

export const resolveAll: HostResolver = async (host) => {
  const found = await dns.promises.lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

/**
 * Resolves the URL's host and checks every address it resolves to (one private address among public
 * ones is enough to refuse: the client could connect to any of them). Throws DestinationNotAllowedError.
 */
export async function assertPublicDestination(url: URL, resolve: HostResolver = resolveAll): Promise<string[]> {
  const host = hostOf(url);
  if (isIP(host)) {
    const refused = refusedAmong(host, [host]);
    if (refused) throw refused;
    return [host];
  }
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    throw new DestinationNotAllowedError(host, 'unresolvable');
  }
  if (addresses.length === 0) throw new DestinationNotAllowedError(host, 'unresolvable');
  const refused = refusedAmong(host, addresses);
  if (refused) throw refused;
  return addresses;
}

/**
 * A `lookup` for http(s).request that refuses private addresses at connection time, so the address
 * that is checked is the address that is connected to (no DNS-rebinding gap between check and use).
 */
export function guardedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, verbatim: true, family: options.family ?? 0, hints: options.hints }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      if (!policy.allowPrivateDestinations) {
        const refused = refusedAmong(
          hostname,
          addresses.map((a) => a.address),
        );
        if (refused) return callback(refused as unknown as NodeJS.ErrnoException, '', 0);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      return callback(null, first.address, first.family);
    });
  };
}
