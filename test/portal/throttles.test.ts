// The portal's limits on what one client can make it do, over real HTTP with the injected clock: mail sent on request
// (a reset, a sign-up, a new email's link) per recipient, per account and per client address, each a 429 with
// Retry-After that says nothing about which addresses have accounts; and the sign-in lock of a client address after
// 50 failures across accounts, the right password of another account refused until it ends.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_MAIL_LIMITS } from "../../src/portal/mail-limits.ts";
import { DEFAULT_THROTTLE } from "../../src/portal/store/throttle.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const HOUR = 3600_000;

describe("portal throttles", () => {
  let smtp: SmtpServer;
  let portal: TestPortal;
  let client: PortalClient;
  const post = async (path: string, fields: Record<string, string>) => {
    await client.get(path);
    return client.post(path, fields);
  };
  const retryAfter = (page: Page) => Number(page.headers.get("retry-after"));
  const mailsTo = (to: string) => smtp.mails().filter((m) => m.to === to).length;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    portal = await startTestPortal(smtp);
    client = new PortalClient(portal.url);
    await signUpAndVerify(new PortalClient(portal.url), smtp, { email: "known@example.test" });
  });
  beforeEach(() => {
    portal.clock.now += 2 * HOUR; // every window and lock of an earlier case is over
  });
  afterAll(async () => {
    await portal?.close();
    await smtp?.stop();
  });

  it("sends at most 5 reset mails an hour to one address, then 429 with Retry-After, the same for an address with no account", async () => {
    const recipient = DEFAULT_MAIL_LIMITS.recipient.failures;
    const before = mailsTo("known@example.test");
    for (const email of ["known@example.test", "nobody@example.test"]) {
      const pages = [];
      for (let i = 0; i <= recipient; i++) pages.push(await post("/reset", { email }));
      expect(pages.map((p) => p.status)).toEqual([...Array(recipient).fill(200), 429]);
      const refused = pages.at(-1)!;
      expect(retryAfter(refused)).toBeGreaterThan(0);
      expect(retryAfter(refused)).toBeLessThanOrEqual(3600);
      expect(refused.text).toContain("We have sent too many mails for this address or from your network");
    }
    expect(mailsTo("known@example.test") - before).toBe(recipient);
    expect(mailsTo("nobody@example.test")).toBe(0);
    // The sign-up mail to the same address is held back too (before any account is made).
    const signUp = await post("/sign-up", { email: "known@example.test", password: "a long password", partner: "P" });
    expect(signUp.status).toBe(429);
    portal.clock.now += retryAfter(signUp) * 1000;
    expect((await post("/reset", { email: "known@example.test" })).status).toBe(200);
  });

  it("sends at most 20 mails an hour asked for from one client address, whatever their recipients", async () => {
    const address = DEFAULT_MAIL_LIMITS.address.failures;
    const statuses: number[] = [];
    for (let i = 0; i <= address; i++) {
      const page =
        i % 10 === 0
          ? await post("/sign-up", { email: `new${i}@example.test`, password: "a long password", partner: "P" })
          : await post("/reset", { email: `someone${i}@example.test` });
      statuses.push(page.status);
    }
    expect(statuses).toEqual([...Array(address).fill(200), 429]);
    expect(retryAfter(client.last!)).toBeGreaterThan(0);
  });

  it("sends at most 5 new-email links an hour for one account, whatever the new addresses", async () => {
    const owner = new PortalClient(portal.url);
    await signUpAndVerify(owner, smtp, { email: "mover@example.test" });
    const statuses: number[] = [];
    for (let i = 0; i <= DEFAULT_MAIL_LIMITS.recipient.failures; i++) {
      await owner.get("/account");
      const page = await owner.post("/account/email", {
        email: `moved${i}@example.test`,
        current: "correct horse battery",
      });
      statuses.push(page.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(owner.last!.text).toMatch(/<p class="error" id="e-email">We have sent too many mails/);
    expect(retryAfter(owner.last!)).toBeGreaterThan(0);
  });

  it("locks a client address after 50 failed sign-ins across accounts: another account's right password is refused (429) until the lock ends", async () => {
    const victim = "locked-out@example.test";
    await signUpAndVerify(new PortalClient(portal.url), smtp, { email: victim, password: "the right password" });
    const perAccount = DEFAULT_THROTTLE.account.failures - 1; // never enough to lock an account
    const statuses: number[] = [];
    for (let i = 0; i < DEFAULT_THROTTLE.address.failures; i++) {
      const email = `guess${Math.floor(i / perAccount)}@example.test`;
      statuses.push((await post("/sign-in", { email, password: `guess ${i}` })).status);
    }
    expect(statuses).toEqual(Array(DEFAULT_THROTTLE.address.failures).fill(401));
    const right = await post("/sign-in", { email: victim, password: "the right password" });
    expect(right.status).toBe(429);
    expect(right.text).toContain("Too many failed sign-ins");
    const wait = retryAfter(right);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(15 * 60);
    portal.clock.now += wait * 1000 - 1000;
    expect((await post("/sign-in", { email: victim, password: "the right password" })).status).toBe(429);
    portal.clock.now += 1000;
    expect((await post("/sign-in", { email: victim, password: "the right password" })).url).toBe("/keys");
  }, 180_000); // 52 password hashes in turn, about 0.5 s each on a busy machine
});
