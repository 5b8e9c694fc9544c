// WEBHOOKS_ALLOW as the portal's settings read it: the addresses and networks webhooks may be sent to though they are
// not public (src/portal/webhooks/address-guard.ts). A leaf module, as proxies.ts is.
import { LOOPBACK_PROXIES, parseProxyEntry } from "./proxies.ts";

/** WEBHOOKS_ALLOW's entries: `loopback` (127.0.0.0/8 and ::1), an address, or a CIDR network. */
export function parseWebhooksAllow(value: string): string[] | string {
  const out: string[] = [];
  for (const e of value
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean)) {
    if (e === "loopback") out.push(...LOOPBACK_PROXIES);
    else if (parseProxyEntry(e)) out.push(e);
    else
      return `${JSON.stringify(e)} is not an address or CIDR network (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8, loopback)`;
  }
  return out;
}
