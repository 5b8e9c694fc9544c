// Password guessing sent at once, over real HTTP on SQLite and PostgreSQL: each sign-in takes its attempt from the
// limits before its password is hashed, so a burst meets the same limits as guesses sent one by one (an account's
// 10, a client network's 50); a browser that signed in to the account before is limited on its own (device cookies)
// and is not locked out by failures from elsewhere; past the hashing pool, sign-ins are answered 503 with Retry-After.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashSecret } from "../../src/portal/secrets.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount, findAccountByEmail, updateAccount } from "../../src/portal/store/accounts.ts";
import { DEFAULT_THROTTLE } from "../../src/portal/store/throttle.ts";
import { PortalClient, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const HOUR = 3600_000;
const PASSWORD = "the right password";
const ACCOUNT_LIMIT = DEFAULT_THROTTLE.account.failures;
const ADDRESS_LIMIT = DEFAULT_THROTTLE.address.failures;
/** Each case waits for up to 35 hashes of about 0.5 s each, two at a time, on a busy machine. */
const SLOW = 120_000;

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

/** A verified, active account made in the database (its password hashed as sign-up hashes it). */
async function makeAccount(portal: TestPortal, email: string, password = PASSWORD, hash?: string) {
  const made = await createAccount(
    portal.db,
    { email, partner: "P", password: hash ?? (await hashPassword(password)) },
    portal.clock.now,
  );
  await updateAccount(portal.db, made!.id, { verified: portal.clock.now, status: "active" });
  return made!.id;
}

/** Clients that each have the sign-in form (its CSRF cookie and token), from `address` (X-Forwarded-For) if given. */
async function clients(portal: TestPortal, n: number, address?: (i: number) => string): Promise<PortalClient[]> {
  const list = Array.from({ length: n }, (_, i) => {
    const client = new PortalClient(portal.url);
    if (address) client.extraHeaders["x-forwarded-for"] = address(i);
    return client;
  });
  await Promise.all(list.map((c) => c.get("/sign-in")));
  return list;
}

const signIn = (client: PortalClient, email: string, password: string) => client.post("/sign-in", { email, password });
const count = (pages: Page[], status: number) => pages.filter((p) => p.status === status).length;
const failedSignIns = async (portal: TestPortal, accountId: string) =>
  Number(
    (
      await portal.db.all("SELECT COUNT(*) AS n FROM audit WHERE account_id = ? AND event = 'signin.failed'", [
        accountId,
      ])
    )[0]!.n,
  );

describe.each(bothDatabases(() => postgres))("sign-in limits under concurrent guesses on $name", ({ url }) => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal(smtp, { databaseUrl: await url(), trustProxy: ["127.0.0.1"] });
  }, 60_000);
  beforeEach(() => {
    portal.clock.now += 2 * HOUR; // every window and lock of an earlier case is over
  });
  afterAll(async () => {
    await portal?.close();
  });

  it(
    "40 wrong passwords for one account at once, then the right one: at most 10 checked, the right one refused until the lock ends",
    async () => {
      const email = "burst@example.test";
      const id = await makeAccount(portal, email);
      const guessers = await clients(portal, 40, (i) => `198.51.100.${i + 1}`);
      const pages = await Promise.all(guessers.map((g, i) => signIn(g, email, `guess ${i}`)));
      expect(count(pages, 401)).toBeLessThanOrEqual(ACCOUNT_LIMIT);
      expect(count(pages, 401) + count(pages, 429) + count(pages, 503)).toBe(40);
      expect(count(pages, 429)).toBeGreaterThanOrEqual(40 - ACCOUNT_LIMIT);
      expect(await failedSignIns(portal, id)).toBe(count(pages, 401)); // every 401 was checked, nothing else was
      const [late] = await clients(portal, 1, () => "203.0.113.9");
      const right = await signIn(late!, email, PASSWORD);
      expect(right.status).toBe(429);
      const wait = Number(right.headers.get("retry-after"));
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(15 * 60);
      portal.clock.now += wait * 1000;
      await late!.get("/sign-in");
      expect((await signIn(late!, email, PASSWORD)).url).toBe("/keys");
    },
    SLOW,
  );

  it(
    "100 wrong passwords from one address to 100 accounts at once: at most 50 checked; the address is locked for another account's right password",
    async () => {
      const email = "neighbour@example.test";
      await makeAccount(portal, email);
      const guessers = await clients(portal, 100, () => "192.0.2.7");
      const pages = await Promise.all(guessers.map((g, i) => signIn(g, `nobody${i}@example.test`, `guess ${i}`)));
      expect(count(pages, 401)).toBeLessThanOrEqual(ADDRESS_LIMIT);
      expect(count(pages, 401) + count(pages, 503)).toBe(ADDRESS_LIMIT); // 503: taken, past the hashing pool
      expect(count(pages, 429)).toBe(100 - ADDRESS_LIMIT);
      const [same] = await clients(portal, 1, () => "192.0.2.7");
      expect((await signIn(same!, email, PASSWORD)).status).toBe(429);
    },
    SLOW,
  );

  it(
    "a browser that signed in before is not locked by failures from elsewhere; its own failures lock only itself",
    async () => {
      const email = "owner@example.test";
      const id = await makeAccount(portal, email);
      const [owner] = await clients(portal, 1, () => "192.0.2.50");
      expect((await signIn(owner!, email, PASSWORD)).url).toBe("/keys");
      const token = owner!.cookies.get("__Host-device")!;
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const stored = await portal.db.all("SELECT token_hash FROM signin_devices WHERE account_id = ?", [id]);
      expect(stored.map((r) => r.token_hash)).toEqual([hashSecret(token)]); // only its hash is kept
      await owner!.post("/sign-out", {});

      // An attacker locks the account: every browser without the device cookie is refused, the right password too.
      const guessers = await clients(portal, 40, (i) => `198.51.100.${i + 101}`);
      const guesses = await Promise.all(guessers.map((g, i) => signIn(g, email, `guess ${i}`)));
      expect(count(guesses, 401)).toBeLessThanOrEqual(ACCOUNT_LIMIT);
      const [thief] = await clients(portal, 1, () => "198.51.100.200");
      expect((await signIn(thief!, email, PASSWORD)).status).toBe(429);

      // The owner's browser signs in all the same.
      await owner!.get("/sign-in");
      expect((await signIn(owner!, email, PASSWORD)).url).toBe("/keys");
      await owner!.post("/sign-out", {});

      // The cookie is no use for another account, which is locked as any.
      const other = "other@example.test";
      await makeAccount(portal, other);
      const others = await clients(portal, 12, (i) => `198.51.100.${i + 210}`);
      await Promise.all(others.map((g, i) => signIn(g, other, `guess ${i}`)));
      await owner!.get("/sign-in");
      expect((await signIn(owner!, other, PASSWORD)).status).toBe(429);

      // Failures from the device count against the device: guesses sent at once with its cookie meet its limit, and
      // then it is locked, while the account's lock (from elsewhere) ends as before.
      const copies = await clients(portal, 20, () => "192.0.2.51");
      for (const copy of copies) copy.cookies.set("__Host-device", token);
      const fromDevice = await Promise.all(copies.map((c, i) => signIn(c, email, `device guess ${i}`)));
      expect(count(fromDevice, 401)).toBeLessThanOrEqual(ACCOUNT_LIMIT);
      expect(count(fromDevice, 429)).toBeGreaterThanOrEqual(20 - ACCOUNT_LIMIT);
      await owner!.get("/sign-in");
      expect((await signIn(owner!, email, PASSWORD)).status).toBe(429);
      portal.clock.now += DEFAULT_THROTTLE.account.lockMs;
      await owner!.get("/sign-in");
      expect((await signIn(owner!, email, PASSWORD)).url).toBe("/keys");
    },
    SLOW,
  );
});

describe("sign-ins past the hashing pool", () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal(smtp, { trustProxy: ["127.0.0.1"] });
  }, 60_000);
  afterAll(async () => {
    await portal?.close();
  });

  it(
    "100 at once, each within its limits: those the pool cannot hold are answered 503 with Retry-After, not kept waiting",
    async () => {
      const guessers = await clients(portal, 100, (i) => `198.51.100.${i + 1}`);
      const pages = await Promise.all(guessers.map((g, i) => signIn(g, `someone${i}@example.test`, `guess ${i}`)));
      expect(count(pages, 401) + count(pages, 503)).toBe(100);
      expect(count(pages, 503)).toBeGreaterThan(0);
      for (const page of pages.filter((p) => p.status === 503)) {
        expect(Number(page.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(page.text).toContain("Please try again in a moment");
      }
      // Each was taken from its limits before the pool refused it, so that one client cannot keep the pool full.
      const rows = await portal.db.all("SELECT failures FROM signin_throttle WHERE key LIKE 'account:someone%'");
      expect(rows.map((r) => Number(r.failures))).toEqual(Array(100).fill(1));
    },
    SLOW,
  );

  it(
    "a hash of older parameters is made again at the current ones when its password signs in",
    async () => {
      const { randomBytes, scryptSync } = await import("node:crypto");
      const salt = randomBytes(16);
      const key = scryptSync(PASSWORD, salt, 32, { N: 2 ** 17, r: 8, p: 1, maxmem: 256 * 2 ** 20 });
      const email = "old@example.test";
      await makeAccount(
        portal,
        email,
        PASSWORD,
        `scrypt$131072$8$1$${salt.toString("base64url")}$${key.toString("base64url")}`,
      );
      const [client] = await clients(portal, 1, () => "203.0.113.1");
      expect((await signIn(client!, email, PASSWORD)).url).toBe("/keys");
      const account = await findAccountByEmail(portal.db, email);
      expect(account!.password).toMatch(/^scrypt\$16384\$8\$5\$/);
      await client!.post("/sign-out", {});
      await client!.get("/sign-in");
      expect((await signIn(client!, email, PASSWORD)).url).toBe("/keys");
    },
    SLOW,
  );
});
