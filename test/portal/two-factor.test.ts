// Two-factor sign-in with TOTP and recovery codes (issue 36), over real HTTP on SQLite and PostgreSQL, codes computed
// here with otpauth at the portal's injected clock: setup refuses a wrong confirming code and keeps the secret sealed
// and the recovery codes hashed; after the password, no page opens but the code step; a wrong or replayed code is
// refused (two at once: one wins); 40 wrong codes at once meet the account's limit and the right one waits for the
// lock; a recovery code works once (two at once: one wins); a password reset leaves two-factor on; turning it off or
// renewing the recovery codes needs a current code.
import { randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_THROTTLE } from "../../src/portal/store/throttle.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { linkIn } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const PASSWORD = "correct horse battery";
const STEP_MS = 30_000;
const SLOW = 120_000;

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

/** The code of `secret` at `at`, as an authenticator app shows it. */
const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });
const count = (pages: Page[], url: string) => pages.filter((p) => p.url === url).length;

describe.each(bothDatabases(() => postgres))("two-factor sign-in, on $name", ({ name, url }) => {
  let portal: TestPortal;
  let n = 0;

  beforeAll(async () => {
    // Each test's clients say (through X-Forwarded-For) they are an address of their own: the client network's
    // limit of one test does not reach the next.
    portal = await startTestPortal(smtp, {
      databaseUrl: await url(),
      secretKey: randomBytes(32),
      trustProxy: ["127.0.0.1"],
    });
  });
  afterAll(async () => {
    await portal?.close();
  });

  /** A client from the test's address. */
  const clientFrom = (address: string) => {
    const client = new PortalClient(portal.url);
    client.extraHeaders["x-forwarded-for"] = address;
    return client;
  };
  /** The code now, and a code that is none of the three steps around now. */
  const now = (secret: string) => codeAt(secret, portal.clock.now);
  const wrong = (secret: string) => {
    const near = [-1, 0, 1].map((d) => codeAt(secret, portal.clock.now + d * STEP_MS));
    return ["000000", "123456", "999999", "424242"].find((c) => !near.includes(c))!;
  };

  /** A new account, signed in, with two-factor set up (a wrong confirming code refused on the way). */
  async function accountWithTwoFactor() {
    const address = `10.0.${n}.1`;
    const email = `tf-${n++}-${name.toLowerCase()}@example.test`;
    const client = clientFrom(address);
    await signUpAndVerify(client, smtp, { email });
    const off = await client.get("/account/two-factor");
    expect(off.text).toContain("Two-factor sign-in is <strong>off</strong>");
    const setup = await client.post("/account/two-factor/setup", { current: PASSWORD });
    expect(setup.url).toBe("/account/two-factor/setup");
    expect(setup.text).toMatch(/<svg[^>]*viewBox/); // the QR code, drawn by the portal
    const secret = /<code class="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replace(/ /g, "");
    const refused = await client.post("/account/two-factor/confirm", { code: wrong(secret) });
    expect(refused.status).toBe(401);
    expect(refused.text).not.toContain("recovery-codes");
    expect((await client.get("/account/two-factor")).text).toContain("Two-factor sign-in is <strong>off</strong>");
    await client.get("/account/two-factor/setup");
    const done = await client.post("/account/two-factor/confirm", { code: now(secret) });
    expect(done.status).toBe(200);
    const codes = [
      ...done.text.matchAll(/<li><code>([A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4})<\/code><\/li>/g),
    ].map((m) => m[1]!);
    expect(codes).toHaveLength(10);
    // The account is told (issue 36, item 3), and the mail holds no code.
    const told = await smtp.waitForMail(email, /Two-factor sign-in was turned on/);
    for (const code of codes) expect(told.body).not.toContain(code);
    portal.clock.now += STEP_MS; // the confirming code's step is used: the next code is the next step's
    return { email, secret, codes, address, client };
  }

  /** A new client from `address` past the password step of `email`: on the code step, no session. */
  async function passwordStep(email: string, address: string, password = PASSWORD) {
    const client = clientFrom(address);
    await client.get("/sign-in");
    const page = await client.post("/sign-in", { email, password });
    expect(page.url).toBe("/sign-in/code");
    expect(page.text).toContain("enter the code your authenticator app shows");
    return client;
  }

  it("keeps the secret sealed and the recovery codes hashed", async () => {
    const { email, secret, codes } = await accountWithTwoFactor();
    const [row] = await portal.db.all(
      "SELECT f.sealed FROM totp_factors f JOIN accounts a ON a.id = f.account_id WHERE a.email = ?",
      [email],
    );
    expect(String(row!.sealed)).toMatch(/^v1\./);
    expect(String(row!.sealed)).not.toContain(secret);
    const stored = (await portal.db.all("SELECT code_hash FROM recovery_codes")).map((r) => String(r.code_hash));
    for (const code of codes) expect(stored.join(" ")).not.toContain(code.replace(/-/g, ""));
  });

  it(
    "opens no page after the password alone, refuses a wrong and a replayed code (two at once: one wins)",
    async () => {
      const { email, secret, address } = await accountWithTwoFactor();
      const client = await passwordStep(email, address);
      for (const path of ["/", "/keys", "/account", "/account/two-factor", "/usage", "/console", "/keys/new/x"])
        expect((await client.get(path)).url, path).toBe("/sign-in/code");
      const before = (await portal.db.all("SELECT COUNT(*) AS n FROM api_keys"))[0]!.n;
      expect((await client.post("/keys", { name: "sneaky" })).url).toBe("/sign-in/code");
      expect((await portal.db.all("SELECT COUNT(*) AS n FROM api_keys"))[0]!.n).toBe(before);
      await client.get("/sign-in/code");
      expect((await client.post("/sign-in/code", { code: wrong(secret) })).status).toBe(401);
      expect((await client.get("/keys")).url).toBe("/sign-in/code");
      const code = now(secret);
      const signedIn = await client.post("/sign-in/code", { code });
      expect(signedIn.url).toBe("/keys");
      expect((await client.get("/account")).url).toBe("/account");

      // The same code again, from another browser past the password: refused.
      const replay = await passwordStep(email, address);
      const again = await replay.post("/sign-in/code", { code });
      expect(again.status).toBe(401);
      expect(again.text).toContain("The code is wrong, or was used already.");

      // The next step's code, sent by two browsers at once: one signs in.
      portal.clock.now += STEP_MS;
      const both = await Promise.all([passwordStep(email, address), passwordStep(email, address)]);
      const next = now(secret);
      const pages = await Promise.all(both.map((c) => c.post("/sign-in/code", { code: next })));
      expect(count(pages, "/keys")).toBe(1);
      expect(pages.filter((p) => p.status === 401)).toHaveLength(1);
    },
    SLOW,
  );

  it(
    "meets the account's limit with 40 wrong codes at once, and refuses the right one while locked",
    async () => {
      const { email, secret, address } = await accountWithTwoFactor();
      const client = await passwordStep(email, address);
      const csrf = client.csrf;
      const bad = wrong(secret);
      const pages = await Promise.all(
        Array.from({ length: 40 }, () => client.post("/sign-in/code", { code: bad }, { csrf })),
      );
      const { failures, lockMs } = DEFAULT_THROTTLE.account;
      // The wrong code at setup (accountWithTwoFactor) took one of the account's attempts: 9 more are checked.
      expect(pages.filter((p) => p.status === 401)).toHaveLength(failures - 1);
      expect(pages.filter((p) => p.status === 429)).toHaveLength(40 - failures + 1);
      const locked = await client.post("/sign-in/code", { code: now(secret) }, { csrf });
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await client.get("/keys")).url).toBe("/sign-in/code");

      // After the lock the password is asked again (the pending sign-in expired), and the right code passes.
      portal.clock.now += lockMs;
      const later = await passwordStep(email, address);
      expect((await later.post("/sign-in/code", { code: now(secret) })).url).toBe("/keys");
    },
    SLOW,
  );

  it(
    "takes a recovery code once (two at once: one wins)",
    async () => {
      const { email, codes, address } = await accountWithTwoFactor();
      const first = await passwordStep(email, address);
      expect((await first.post("/sign-in/code", { code: codes[0]!.toLowerCase() })).url).toBe("/keys");
      const second = await passwordStep(email, address);
      expect((await second.post("/sign-in/code", { code: codes[0]! })).status).toBe(401);
      const both = await Promise.all([passwordStep(email, address), passwordStep(email, address)]);
      const pages = await Promise.all(both.map((c) => c.post("/sign-in/code", { code: codes[1]! })));
      expect(count(pages, "/keys")).toBe(1);
      expect(pages.filter((p) => p.status === 401)).toHaveLength(1);
      expect((await first.get("/account/two-factor")).text).toContain("You have 8 unused recovery codes of 10.");
    },
    SLOW,
  );

  it(
    "keeps two-factor on through a password reset by email",
    async () => {
      const { email, secret, address } = await accountWithTwoFactor();
      const client = clientFrom(address);
      await client.get("/reset");
      await client.post("/reset", { email });
      const mail = await smtp.waitForMail(email, /Reset your/);
      const token = new URL(linkIn(mail)).searchParams.get("token")!;
      await client.get(`/reset/confirm?token=${token}`);
      const newPassword = "copper lantern seventeen";
      expect((await client.post("/reset/confirm", { token, password: newPassword })).url).toBe("/sign-in?reset=1");
      const after = await passwordStep(email, address, newPassword);
      expect((await after.get("/keys")).url).toBe("/sign-in/code");
      expect((await after.post("/sign-in/code", { code: now(secret) })).url).toBe("/keys");
      expect((await after.get("/account/two-factor")).text).toContain("Two-factor sign-in is <strong>on</strong>");
    },
    SLOW,
  );

  it(
    "needs a current code to renew the recovery codes or turn two-factor off",
    async () => {
      const { email, secret, codes, address, client } = await accountWithTwoFactor();
      await client.get("/account/two-factor");
      expect((await client.post("/account/two-factor/recovery-codes", { code: wrong(secret) })).status).toBe(401);
      const renewed = await client.post("/account/two-factor/recovery-codes", { code: now(secret) });
      expect(renewed.text).toContain("You have ten new recovery codes");
      portal.clock.now += STEP_MS;
      await client.get("/account/two-factor");
      expect((await client.post("/account/two-factor/disable", { code: codes[2]! })).status).toBe(401); // an old one
      expect((await client.get("/account/two-factor")).text).toContain("Two-factor sign-in is <strong>on</strong>");
      const off = await client.post("/account/two-factor/disable", { code: now(secret) });
      expect(off.text).toContain("Two-factor sign-in is off.");
      const plain = clientFrom(address);
      await plain.get("/sign-in");
      expect((await plain.post("/sign-in", { email, password: PASSWORD })).url).toBe("/keys");
    },
    SLOW,
  );
});
