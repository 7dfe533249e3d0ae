import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { receiverLookup } from './receiver-dns.ts';

type IP = ipaddr.IPv4 | ipaddr.IPv6;

// ipaddr calls these 'unicast' or lumps them with public ones, so they are matched by prefix.
const ipv4Compatible = ipaddr.IPv6.parseCIDR('::/96');
const nat64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function parseIP(text: string): IP | null {
  // ipaddr reads "::a.b.c.d" as IPv4-mapped, but it is IPv4-compatible (::/96): inet_ntop prints such DNS answers that way.
  const address = /^::[^:]*\./.test(text) ? `0${text}` : text;
  // Inside IPv6, ipaddr reads "0177" as decimal 177 and accepts hex; inet_pton and WHATWG URL refuse both.
  const bare = address.replace(/%.*$/, '');
  const tail = bare.slice(bare.lastIndexOf(':') + 1);
  if (bare.includes(':') && tail.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
  return ipaddr.isValid(address) ? ipaddr.parse(address) : null;
}

const embeddedIPv4 = (ip: ipaddr.IPv6, byte: number) => new ipaddr.IPv4(ip.toByteArray().slice(byte, byte + 4));

function isPublic(ip: IP): boolean {
  if (ip instanceof ipaddr.IPv4) return ip.range() === 'unicast';
  switch (ip.range()) {
    case 'unicast':
      return !ip.match(ipv4Compatible);
    case 'ipv4Mapped':
    case 'rfc6145':
      return isPublic(embeddedIPv4(ip, 12));
    // 64:ff9b:1::/48 is for local use, so only the well-known NAT64 prefix reaches a public IPv4 address.
    case 'rfc6052':
      return ip.match(nat64) && isPublic(embeddedIPv4(ip, 12));
    case '6to4':
      return isPublic(embeddedIPv4(ip, 2));
    default:
      return false;
  }
}

/** True unless `address` is an IP literal (any notation ipaddr.js knows) that reaches a public unicast address. */
export function isPrivateAddress(address: string): boolean {
  const ip = parseIP(address);
  return ip === null || !isPublic(ip);
}

// "localhost." is the same host as "localhost"; the case matters only for non-special URL schemes, which keep it.
const hostOf = (url: URL) =>
  url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Checked when a URL is registered: refused if it names or resolves to a non-public address. A name
 * that does not resolve now (or not within the lookup's 2 s) is accepted; delivery checks the
 * address it actually connects to.
 */
export async function privateTargetReason(rawUrl: string): Promise<string | null> {
  const url = new URL(rawUrl);
  const host = hostOf(url);
  if (ipaddr.isValid(host)) return isPrivateAddress(host) ? `${host} is a loopback or private address` : null;
  if (isLoopbackName(host)) return `${host} is a loopback name`;
  try {
    // The name as written: with or without a trailing dot, the resolver may apply different search domains.
    const addresses = await receiverLookup(url.hostname);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    return bad ? `${url.hostname} resolves to ${bad.address}, a loopback or private address` : null;
  } catch {
    return null;
  }
}

export function literalPrivateTarget(url: URL): boolean {
  const host = hostOf(url);
  return isLoopbackName(host) || (ipaddr.isValid(host) && isPrivateAddress(host));
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The dns.lookup of a delivery socket, through the receivers' bounded lookups; unless `allowPrivate`,
 * refusing private answers at connect time.
 */
export function receiverSocketLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    const { all, ...rest } = options;
    receiverLookup(hostname, rest).then(
      (list) => {
        const bad = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
        if (bad) return callback(Object.assign(new Error(`${hostname} resolves to a private address (${bad.address})`), { code: 'EPRIVATE' }), []);
        if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        if (all) return callback(null, list);
        callback(null, list[0]!.address, list[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

/** receiverSocketLookup refusing private answers. */
export const publicOnlyLookup = receiverSocketLookup(false);
