// The webhooks' pure parts as tables: which addresses the guard refuses (with and without WEBHOOKS_ALLOW, by https and
// plain http), its `lookup` refusing a name any of whose addresses is refused, WEBHOOKS_ALLOW's parsing, the affid
// splice into sale_url, the signature against standardwebhooks' own, and the retry schedule's bounds.
import type { lookup } from "node:dns";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { parseWebhooksAllow } from "../../../src/config/webhooks-allow.ts";
import { createAddressGuard } from "../../../src/portal/webhooks/address-guard.ts";
import { withAffid } from "../../../src/portal/webhooks/payload.ts";
import { RETRY_SCHEDULE_MS, retryAt } from "../../../src/portal/webhooks/schedule.ts";
import { newWebhookSecret, signedHeaders } from "../../../src/portal/webhooks/signing.ts";

describe("the address guard", () => {
  const strict = createAddressGuard([]);
  it.each([
    ["127.0.0.1", false],
    ["127.255.0.9", false],
    ["10.1.2.3", false],
    ["172.16.0.1", false],
    ["172.31.255.255", false],
    ["192.168.0.1", false],
    ["100.64.0.1", false],
    ["169.254.169.254", false],
    ["0.0.0.0", false],
    ["224.0.0.1", false],
    ["255.255.255.255", false],
    ["::", false],
    ["::1", false],
    ["fd12:3456::1", false],
    ["fe80::1", false],
    ["::ffff:10.0.0.1", false],
    ["::ffff:127.0.0.1", false],
    ["64:ff9b::a00:1", false],
    ["93.184.216.34", true],
    ["172.32.0.1", true],
    ["100.128.0.1", true],
    ["2606:4700::1111", true],
  ])("%s over https: %s", (address, allowed) => {
    expect(strict.refusal(address, false) === null).toBe(allowed);
  });

  it("allows WEBHOOKS_ALLOW's addresses, by plain http too, and plain http to no other", () => {
    const guard = createAddressGuard(parseWebhooksAllow("loopback, 10.20.0.0/16") as string[]);
    expect(guard.refusal("127.0.0.1", true)).toBeNull();
    expect(guard.refusal("::1", true)).toBeNull();
    expect(guard.refusal("10.20.3.4", true)).toBeNull();
    expect(guard.refusal("10.21.3.4", false)).toMatch(/not a public address/);
    expect(guard.refusal("93.184.216.34", true)).toMatch(/plain http/);
    expect(guard.refusal("93.184.216.34", false)).toBeNull();
  });

  it("refuses a name when any of its addresses is refused, answering as the caller asked", async () => {
    const resolve = ((_h: string, _o: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) =>
      cb(null, [
        { address: "93.184.216.34", family: 4 },
        { address: "10.0.0.1", family: 4 },
      ])) as unknown as typeof lookup;
    const guard = createAddressGuard([], resolve);
    const err = await new Promise((done) => guard.lookup(false)("mixed.example", {}, (e) => done(e)));
    expect(String(err)).toContain("refused: 10.0.0.1 is not a public address");
    const fine = createAddressGuard([], ((_h: string, _o: unknown, cb: (e: null, a: object[]) => void) =>
      cb(null, [{ address: "93.184.216.34", family: 4 }])) as unknown as typeof lookup);
    const one = await new Promise((done) => fine.lookup(false)("a.example", {}, (_e, a, f) => done([a, f])));
    expect(one).toEqual(["93.184.216.34", 4]);
  });

  it("reads WEBHOOKS_ALLOW", () => {
    expect(parseWebhooksAllow("")).toEqual([]);
    expect(parseWebhooksAllow("loopback")).toEqual(["127.0.0.0/8", "::1/128"]);
    expect(parseWebhooksAllow("10.0.0.5, fd00::/8")).toEqual(["10.0.0.5", "fd00::/8"]);
    expect(parseWebhooksAllow("example.com")).toMatch(/not an address or CIDR/);
  });
});

describe("the payload and its signature", () => {
  it("splices affid at the end of sale_url only", () => {
    const data = '{"sale":{"sale":"https://api/x","sale_url":"https://shop/s?utm_source=a\\"b","name":"x"},"at":"t"}';
    expect(withAffid(data, "p7")).toBe(
      '{"sale":{"sale":"https://api/x","sale_url":"https://shop/s?utm_source=a\\"b&affid=p7","name":"x"},"at":"t"}',
    );
    expect(withAffid(data, "")).toBe(data);
    expect(withAffid('{"test":true}', "p7")).toBe('{"test":true}');
  });

  it("signs as standardwebhooks verifies, with either of two secrets", () => {
    const [a, b] = [newWebhookSecret(), newWebhookSecret()];
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const body = Buffer.from('{"type":"sale.begins"}');
    const headers = signedHeaders([a, b], "1.0.AAAA", Math.floor(Date.now() / 1000), body);
    expect(new Webhook(a).verify(body, headers)).toEqual({ type: "sale.begins" });
    expect(new Webhook(b).verify(body, headers)).toEqual({ type: "sale.begins" });
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });

  it("retries over at least 24 hours, each wait within its jitter, then gives up", () => {
    const total = (r: number) => RETRY_SCHEDULE_MS.reduce((t, _w, i) => retryAt(i + 1, t, () => r)!, 0);
    expect(total(0)).toBeGreaterThanOrEqual(30 * 3600_000); // the shortest jitter: still over 24 hours
    expect(total(0.5)).toBe(RETRY_SCHEDULE_MS.reduce((t, w) => t + w, 0));
    expect(retryAt(1, 0, () => 0)).toBe(4000);
    expect(retryAt(1, 0, () => 0.999999)).toBe(6000);
    expect(retryAt(RETRY_SCHEDULE_MS.length + 1, 0, Math.random)).toBeNull();
  });
});
