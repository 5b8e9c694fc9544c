// Where a webhook may be sent: a public address only, unless WEBHOOKS_ALLOW names it. Checked where the connection is
// made (the `lookup` the request uses, and the address itself when the URL names one), so that a name that resolved
// to a public address when the endpoint was added and to a private one now (DNS rebinding) is refused.
import { lookup as dnsLookup } from "node:dns";
import type { LookupAddress, LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { parseProxyEntry } from "../../config/proxies.ts";
import { boundedMemo } from "../../bounded-memo.ts";

/** Addresses no webhook is sent to unless allowed: loopback, private, link-local (metadata), CGNAT, unspecified... */
const NOT_PUBLIC: readonly string[] = [
  "0.0.0.0/8", // this network, the unspecified address
  "10.0.0.0/8", // RFC 1918
  "100.64.0.0/10", // CGNAT (RFC 6598)
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local, the clouds' metadata service (169.254.169.254)
  "172.16.0.0/12", // RFC 1918
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation
  "192.168.0.0/16", // RFC 1918
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "224.0.0.0/3", // multicast, reserved, broadcast
  "::/128", // unspecified
  "::1/128", // loopback
  "64:ff9b::/96", // NAT64: an IPv4 address behind it may be any
  "100::/64", // discard
  "2001:db8::/32", // documentation
  "fc00::/7", // unique local (ULA)
  "fe80::/10", // link-local
  "ff00::/8", // multicast
];

const listOf = (entries: readonly string[]) => {
  const list = new BlockList();
  for (const e of entries) {
    const p = parseProxyEntry(e)!;
    list.addSubnet(p.address, p.prefix, p.family);
  }
  return list;
};

/** Addresses whose answer a guard keeps. */
const REFUSALS_KEPT = 1024;

/** The guard: which addresses a webhook may reach, and the `lookup` that refuses the others. */
export interface AddressGuard {
  /** Why `address` may not be reached (by `http:` when `plain`), or null when it may. */
  refusal(address: string, plain: boolean): string | null;
  /** A `lookup` for node's http(s) request: resolves the name and refuses when any of its addresses is refused. */
  lookup(plain: boolean): typeof dnsLookup;
}

/** A guard that lets through public addresses over https, and the `allow`ed ones (WEBHOOKS_ALLOW) over http too. */
export function createAddressGuard(allow: readonly string[], resolve: typeof dnsLookup = dnsLookup): AddressGuard {
  const blocked = listOf(NOT_PUBLIC);
  const allowed = listOf(allow);
  const check = (address: string, plain: boolean): string | null => {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const ip = mapped ?? address;
    const family = isIP(ip) === 6 ? "ipv6" : "ipv4";
    if (isIP(ip) === 0) return `${address} is not an address`;
    if (allowed.check(ip, family)) return null;
    if (plain) return `plain http is allowed only to the addresses WEBHOOKS_ALLOW names (${address} is not one)`;
    return blocked.check(ip, family) ? `${address} is not a public address` : null;
  };
  // The lists never change: an address's answer is kept (the last REFUSALS_KEPT), not checked again at each delivery.
  const verdicts = {
    http: boundedMemo(REFUSALS_KEPT, (address) => check(address, true)),
    https: boundedMemo(REFUSALS_KEPT, (address) => check(address, false)),
  };
  const refusal = (address: string, plain: boolean): string | null => (plain ? verdicts.http : verdicts.https)(address);
  const lookupFor = (plain: boolean) =>
    ((hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
      resolve(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
        if (err) return callback(err);
        const refused = addresses.map((a) => refusal(a.address, plain)).find((r) => r !== null);
        if (refused || addresses.length === 0)
          return callback(
            Object.assign(new Error(`refused: ${refused ?? `${hostname} has no address`}`), { code: "EREFUSED" }),
          );
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    }) as unknown as typeof dnsLookup;
  // One function each for http and https, made once (not at each request).
  const lookups = { http: lookupFor(true), https: lookupFor(false) };
  return { refusal, lookup: (plain) => (plain ? lookups.http : lookups.https) };
}
