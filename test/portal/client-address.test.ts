// The portal's client address behind proxies (TRUST_PROXY): a trusted proxy's X-Forwarded-For names the client whose
// sign-in failures are counted, so one guesser behind a CDN locks out only itself; from any other peer the header is
// ignored, so a client cannot pick its address; IPv6 clients are counted by their /64. Real HTTP, a real SMTP server,
// the sign-in lock per address at 2.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_THROTTLE } from "../../src/portal/store/throttle.ts";
import { PortalClient, startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const throttle = { account: DEFAULT_THROTTLE.account, address: { failures: 2, windowMs: 60_000, lockMs: 60_000 } };

describe("the portal's client address", () => {
  let smtp: SmtpServer;
  let trusting: TestPortal;
  let plain: TestPortal;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    trusting = await startTestPortal(smtp, { throttle, trustProxy: ["127.0.0.1"] });
    plain = await startTestPortal(smtp, { throttle });
  }, 120_000);
  afterAll(async () => {
    await trusting?.close();
    await plain?.close();
    await smtp?.stop();
  });

  /** A failed sign-in from a client that says (through X-Forwarded-For) it is `address`: the answer's status. */
  const failFrom = async (portal: TestPortal, address: string) => {
    const client = new PortalClient(portal.url);
    client.extraHeaders["x-forwarded-for"] = address;
    await client.get("/sign-in");
    return (await client.post("/sign-in", { email: "nobody@example.test", password: "not the password" })).status;
  };

  it("behind a trusted proxy, counts each named client on its own", async () => {
    expect([await failFrom(trusting, "198.51.100.1"), await failFrom(trusting, "198.51.100.1")]).toEqual([401, 401]);
    expect(await failFrom(trusting, "198.51.100.1")).toBe(429); // that client is locked out
    expect(await failFrom(trusting, "198.51.100.2")).toBe(401); // another behind the same proxy is not
  }, 60_000);

  it("counts the IPv6 clients of one /64 as one client, as the API does", async () => {
    const network = "2001:db8:5:6";
    expect([await failFrom(trusting, `${network}::1`), await failFrom(trusting, `${network}:0:0:0:2`)]).toEqual([
      401, 401,
    ]);
    expect(await failFrom(trusting, `${network}:ffff:ffff:ffff:ffff`)).toBe(429); // a third address of the /64
    expect(await failFrom(trusting, "2001:db8:5:7::1")).toBe(401); // the next /64 is another client
  }, 60_000);

  it("from a peer that is not a trusted proxy, ignores the header: the client cannot pick its address", async () => {
    expect([await failFrom(plain, "198.51.100.1"), await failFrom(plain, "198.51.100.2")]).toEqual([401, 401]);
    expect(await failFrom(plain, "198.51.100.3")).toBe(429); // all three were 127.0.0.1
  }, 60_000);
});
