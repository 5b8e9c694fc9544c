// Whose failures a request counts as: the peer, or from trusted proxies only the nearest untrusted X-Forwarded-For
// hop; IPv6 grouped by /64. A table, then the real server with and without trusted proxies.
import type { IncomingMessage } from "node:http";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientKey, createClientLimitKey } from "../../../src/serve/admission/client-address.ts";
import { LOOPBACK_PROXIES } from "../../../src/config/proxies.ts";
import { startTestApi, T0 } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

const req = (peer: string, xff?: string | string[]) =>
  ({
    socket: { remoteAddress: peer },
    headers: xff === undefined ? {} : { "x-forwarded-for": xff },
  }) as unknown as IncomingMessage;

describe("clientKey", () => {
  it.each([
    ["192.0.2.7", "192.0.2.7"],
    ["::ffff:192.0.2.7", "192.0.2.7"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::9", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002:ffff::1", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
  ])("%s -> %s", (address, key) => expect(clientKey(address)).toBe(key));
});

describe("createClientLimitKey", () => {
  const none = createClientLimitKey([]);
  const proxies = createClientLimitKey(["10.0.0.0/8", ...LOOPBACK_PROXIES]);
  it.each<[string, (r: IncomingMessage) => string, IncomingMessage, string]>([
    ["no trusted proxy: the header is ignored", none, req("192.0.2.1", "198.51.100.9"), "192.0.2.1"],
    ["an untrusted peer's header is ignored", proxies, req("192.0.2.1", "198.51.100.9"), "192.0.2.1"],
    ["a trusted peer: the last hop", proxies, req("127.0.0.1", "198.51.100.9"), "198.51.100.9"],
    ["past every trusted hop", proxies, req("127.0.0.1", "198.51.100.9, 10.1.2.3, 10.0.0.1"), "198.51.100.9"],
    [
      "a client's own entries left of the first untrusted hop are not read",
      proxies,
      req("127.0.0.1", "6.6.6.6, 198.51.100.9"),
      "198.51.100.9",
    ],
    [
      "a malformed hop stops the walk at the last trusted one",
      proxies,
      req("127.0.0.1", "198.51.100.9, junk, 10.0.0.1"),
      "10.0.0.1",
    ],
    ["no header from a trusted peer: the peer", proxies, req("10.0.0.2"), "10.0.0.2"],
    ["repeated headers are read as one list", proxies, req("127.0.0.1", ["198.51.100.9", "10.0.0.1"]), "198.51.100.9"],
    ["an IPv4-mapped trusted peer", proxies, req("::ffff:127.0.0.1", "198.51.100.9"), "198.51.100.9"],
    ["an IPv6 client by its /64", proxies, req("::1", "2001:db8:aa:bb:1:2:3:4"), "2001:db8:aa:bb::/64"],
  ])("%s", (_, address, r, client) => expect(address(r)).toBe(client));

  it("refuses an entry that is not an address or network", () => {
    expect(() => createClientLimitKey(["proxy.example.com"])).toThrow(/not an address or network/);
  });
});

describe("the failure lockout, by the address a trusted proxy names", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(undefined, { authFailureLimit: { rate: 1, burst: 2 }, trustProxy: ["127.0.0.1"] });
  });
  afterAll(() => api.close());

  /** A GET from `local` (a loopback address of this machine) with X-Forwarded-For `xff`; resolves with the status. */
  const from = (local: string, xff: string, key: string) =>
    new Promise<number>((resolve, reject) => {
      const { port } = new URL(api.url);
      const r = request(
        {
          host: "127.0.0.1",
          port,
          localAddress: local,
          path: `/v1/sales/active.json?apikey=${key}`,
          headers: { "X-Forwarded-For": xff },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      r.on("error", reject);
      r.end();
    });
  const unknown = (i: number) => `${"Z".repeat(30)}${String(i).padStart(2, "0")}`;
  /** The detail of a 401 for an unknown key sent from 127.0.0.1 (the trusted proxy) naming `xff`. */
  const lockedDetail = async (xff: string) => {
    const res = await fetch(`${api.url}/v1/sales/active.json?apikey=${unknown(99)}`, {
      headers: { "X-Forwarded-For": xff },
    });
    return ((await res.json()) as { detail: string }).detail;
  };

  it("counts each named client on its own, and ignores the header from a peer that is not a trusted proxy", async () => {
    api.clock.now = T0 + 10;
    for (let i = 0; i < 2; i++) expect(await from("127.0.0.1", "198.51.100.1", unknown(i))).toBe(401);
    expect(await lockedDetail("198.51.100.1")).toMatch(/too many failed/);
    // Another client behind the same proxy is not locked out by the first.
    expect(await lockedDetail("198.51.100.2")).toMatch(/unknown or revoked/);
    // From 127.0.0.2, not a trusted proxy, the header names no one: it cannot lock 198.51.100.3 out...
    for (let i = 0; i < 3; i++) await from("127.0.0.2", "198.51.100.3", unknown(i));
    expect(await lockedDetail("198.51.100.3")).toMatch(/unknown or revoked/);
    // ...and its own failures count against 127.0.0.2, whatever it names.
    expect(await from("127.0.0.2", "198.51.100.4", api.key)).toBe(200);
  });
});
