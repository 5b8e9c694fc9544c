// The client address a request's limits are counted by: the peer, or, from configured proxies only, the nearest
// address in X-Forwarded-For that is not one of them; IPv6 clients grouped by their /64.
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import { parseProxyEntry } from "../../config/proxies.ts";

/** An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as its IPv4 address; any other as it is. */
const unmapped = (address: string): string =>
  address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;

/** The first 64 bits of an IPv6 address, as `a:b:c:d::/64`: one client (a host or a home network). */
function ipv6Network(address: string): string {
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === "" ? [] : tail.split(":");
  const groups = address.includes("::")
    ? [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

/** The key a client's failures are counted under: an IPv4 address, or an IPv6 /64. */
export function clientKey(address: string): string {
  const a = unmapped(address);
  return isIP(a) === 6 && !a.includes(".") ? ipv6Network(a) : a;
}

/**
 * Returns the function that names a request's client: its peer address, unless the peer is one of `trusted`
 * (addresses or networks); then X-Forwarded-For is read from the right, past every trusted address, and the first
 * other valid address is the client (nginx's `real_ip_recursive on`). A malformed entry stops the walk at the
 * last trusted hop. The address exactly as found (the portal's audit trail shows it); {@link createClientLimitKey}
 * groups it for the limits.
 */
export function createExactClientAddress(trusted: readonly string[]): (req: IncomingMessage) => string {
  if (trusted.length === 0) return (req) => unmapped(req.socket.remoteAddress ?? "");
  const isTrusted = createTrustCheck(trusted);
  return (req) => {
    let client = req.socket.remoteAddress ?? "";
    if (!isTrusted(client)) return unmapped(client);
    const header = req.headers["x-forwarded-for"];
    const hops = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!.trim();
      if (isIP(hop) === 0) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
    return unmapped(client);
  };
}

/** Returns whether an address is one of `trusted` (addresses or networks, as TRUST_PROXY names them). */
function createTrustCheck(trusted: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const entry of trusted) {
    const p = parseProxyEntry(entry);
    if (!p) throw new Error(`not an address or network: ${JSON.stringify(entry)}`);
    list.addSubnet(p.address, p.prefix, p.family);
  }
  return (address) => {
    const a = unmapped(address);
    const version = isIP(a);
    return version !== 0 && list.check(a, version === 4 ? "ipv4" : "ipv6");
  };
}

/** Returns whether a request comes straight from one of `trusted` (its peer; X-Forwarded-For is not read). */
export function createTrustedPeer(trusted: readonly string[]): (req: IncomingMessage) => boolean {
  if (trusted.length === 0) return () => false;
  const isTrusted = createTrustCheck(trusted);
  return (req) => isTrusted(req.socket.remoteAddress ?? "");
}

/**
 * {@link createExactClientAddress}, its address grouped by {@link clientKey} (IPv6 by /64): the name the limits count
 * a client by (the API's failed authentications, the event streams' caps, the portal's limits).
 */
export function createClientLimitKey(trusted: readonly string[]): (req: IncomingMessage) => string {
  const resolve = createExactClientAddress(trusted);
  return (req) => clientKey(resolve(req));
}
