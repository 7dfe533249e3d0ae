import { lookup } from 'node:dns/promises';
import { lookup as lookupCallback, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

// Loopback, private, link-local, CGNAT, unspecified, multicast and other non-public ranges.
const blocked = new BlockList();
for (const [net, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/**
 * Checked when a URL is registered: refused if it names or resolves to a non-public address. A name
 * that does not resolve now is accepted; delivery checks the address it actually connects to.
 */
export async function privateTargetReason(rawUrl: string): Promise<string | null> {
  const host = hostOf(new URL(rawUrl));
  if (isIP(host)) return isPrivateAddress(host) ? `${host} is a loopback or private address` : null;
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  try {
    const addresses = await lookup(host, { all: true });
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    return bad ? `${host} resolves to ${bad.address}, a loopback or private address` : null;
  } catch {
    return null;
  }
}

export function literalPrivateTarget(url: URL): boolean {
  const host = hostOf(url);
  return host === 'localhost' || (isIP(host) !== 0 && isPrivateAddress(host));
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A dns.lookup for the delivery socket that refuses private answers: checked at connect time. */
export function publicOnlyLookup(hostname: string, options: object, callback: LookupCallback): void {
  lookupCallback(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(Object.assign(new Error(`${hostname} resolves to a private address (${bad.address})`), { code: 'EPRIVATE' }), []);
    if ((options as { all?: boolean }).all) return callback(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
}
