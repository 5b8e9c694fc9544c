// Trusted proxies as the configuration names them (`TRUST_PROXY`): addresses and CIDR networks. A leaf module, so
// that the configuration can check them without loading the server.
import { isIP } from "node:net";
import { z } from "zod";

/** `TRUST_PROXY=loopback`: the shipped Varnish or nginx on the same machine. */
export const LOOPBACK_PROXIES: readonly string[] = ["127.0.0.0/8", "::1/128"];

/** A proxy address or network (`10.0.0.5`, `10.0.0.0/8`, `fd00::/8`), or null when it is not one. */
export function parseProxyEntry(entry: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } | null {
  const [address = "", prefixText, extra] = entry.trim().split("/");
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return null;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return null;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/**
 * `TRUST_PROXY` as the proxies it names (`0`: none; `loopback`: this machine's addresses), or the message that says
 * what is wrong with it. `1`, which once trusted X-Forwarded-For from every peer, is refused with what to set instead.
 */
function parseTrustProxy(value: string): string[] | string {
  const entries = value
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 1 && entries[0] === "0") return [];
  const out: string[] = [];
  for (const e of entries) {
    if (e === "1")
      return "TRUST_PROXY=1 trusted X-Forwarded-For from any peer, so a client could name any address; list the proxies instead (addresses or CIDR networks, comma-separated), e.g. TRUST_PROXY=loopback or TRUST_PROXY=10.0.0.0/8";
    if (e === "loopback") out.push(...LOOPBACK_PROXIES);
    else if (parseProxyEntry(e)) out.push(e);
    else
      return `${JSON.stringify(e)} is not an address or CIDR network (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8, loopback)`;
  }
  return out;
}

/** `TRUST_PROXY` as the API's and the portal's configurations read it: the proxies' addresses, or a message. */
export const TrustProxySchema = z
  .string()
  .default("0")
  .transform((v, ctx) => {
    const proxies = parseTrustProxy(v);
    if (typeof proxies !== "string") return proxies;
    ctx.addIssue({ code: "custom", message: proxies });
    return z.NEVER;
  });
