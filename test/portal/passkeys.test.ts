// Passkeys (issue 36, item 2) over real HTTP on SQLite and PostgreSQL, the portal on http://localhost:<port> (its RP
// ID localhost), the ceremonies answered by a software authenticator (soft-authenticator.ts): adding one needs the
// password, and the first one turns two-factor on with ten recovery codes; a passkey signs in alone and as the second
// step after the password; a replayed answer, a counter not higher than the last, another account's passkey, an
// unverified user signing in alone and another browser's challenge are refused; one challenge sent twice at once
// signs in once; 40 wrong answers at once meet the account's limit; removing the last passkey turns two-factor off.
import { randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_THROTTLE } from "../../src/portal/store/throttle.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { SoftAuthenticator } from "./soft-authenticator.ts";
import type { Lie } from "./soft-authenticator.ts";
import type { SmtpServer } from "./smtp-server.ts";

const PASSWORD = "correct horse battery";
const SLOW = 120_000;

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

/** The options a page put on its passkey form (data-options, HTML-escaped JSON). */
function optionsOn(page: Page): { challenge: string; user: { id: string } } {
  const attr = /data-options="([^"]+)"/.exec(page.text)?.[1];
  if (!attr) throw new Error(`no passkey options on ${page.url} (${page.status})`);
  const text = attr
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">");
  return JSON.parse(text.replace(/&amp;/g, "&")) as { challenge: string; user: { id: string } };
}
const count = (pages: Page[], url: string) => pages.filter((p) => p.url === url).length;

describe.each(bothDatabases(() => postgres))("passkeys, on $name", ({ name, url }) => {
  let portal: TestPortal;
  let n = 0;

  beforeAll(async () => {
    // On localhost (WebAuthn's RP ID cannot be an IP address); each test's clients from an address of their own.
    portal = await startTestPortal(smtp, {
      databaseUrl: await url(),
      secretKey: randomBytes(32),
      host: "localhost",
      trustProxy: ["127.0.0.1", "::1"],
    });
  });
  afterAll(async () => {
    await portal?.close();
  });

  const clientFrom = (address: string) => {
    const client = new PortalClient(portal.url);
    client.extraHeaders["x-forwarded-for"] = address;
    return client;
  };

  /** A new account, signed in, with one passkey added (a wrong password refused on the way), and its codes. */
  async function accountWithPasskey() {
    const address = `10.1.${n}.1`;
    const email = `pk-${n++}-${name.toLowerCase()}@example.test`;
    const client = clientFrom(address);
    await signUpAndVerify(client, smtp, { email });
    expect((await client.get("/account/two-factor")).text).toContain("Two-factor sign-in is <strong>off</strong>");
    const wrong = await client.post("/account/two-factor/passkeys/new", { name: "Laptop", current: "not it at all" });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain("data-options");
    const page = await client.post("/account/two-factor/passkeys/new", { name: "Laptop", current: PASSWORD });
    expect(page.text).toContain("Create the passkey");
    expect(page.text).toContain("needs JavaScript");
    const authenticator = new SoftAuthenticator(portal.url);
    const made = authenticator.register(optionsOn(page));
    const done = await client.post("/account/two-factor/passkeys", { name: "Laptop", response: JSON.stringify(made) });
    expect(done.status).toBe(200);
    const codes = [...done.text.matchAll(/<li><code>([A-Z2-9-]{19})<\/code><\/li>/g)].map((m) => m[1]!);
    expect(codes).toHaveLength(10); // the first second factor: recovery codes, for a lost device
    const told = await smtp.waitForMail(email, /A passkey was added/);
    expect(told.body.replace(/\s+/g, " ")).toContain('A passkey, "Laptop", was added');
    expect(told.body.replace(/\s+/g, " ")).toContain("Two-factor sign-in is now on");
    expect((await client.get("/account/two-factor")).text).toContain("Two-factor sign-in is <strong>on</strong>");
    return { email, address, client, authenticator, codes };
  }

  /** Each client's form token, from the last page that had one (a JSON answer has none). */
  const tokens = new WeakMap<PortalClient, string>();
  const csrfOf = (client: PortalClient) => {
    if (client.csrf) tokens.set(client, client.csrf);
    return tokens.get(client) ?? "";
  };
  /** A browser's options to sign in with a passkey alone (or, past the password, as the second step). */
  async function signInOptions(client: PortalClient) {
    if (!client.last) await client.get("/sign-in");
    const page = await client.post("/sign-in/passkey/options", {}, { csrf: csrfOf(client) });
    expect(page.status).toBe(200);
    return JSON.parse(page.text) as { challenge: string; userVerification: string; allowCredentials: { id: string }[] };
  }
  const send = (client: PortalClient, answer: unknown) =>
    client.post("/sign-in/passkey", { response: JSON.stringify(answer) }, { csrf: csrfOf(client) });
  /** A new client from `address` past the password of `email`, on the code step. */
  async function passwordStep(email: string, address: string) {
    const client = clientFrom(address);
    await client.get("/sign-in");
    const page = await client.post("/sign-in", { email, password: PASSWORD });
    expect(page.url).toBe("/sign-in/code");
    return client;
  }

  it(
    "signs in with a passkey alone and as the second step, and keeps it with its use",
    async () => {
      const { email, address, authenticator } = await accountWithPasskey();
      const alone = clientFrom(address);
      const options = await signInOptions(alone);
      expect(options.userVerification).toBe("required");
      expect(options.allowCredentials).toEqual([]); // discoverable: the browser picks the passkey
      expect((await send(alone, authenticator.assert(options.challenge))).url).toBe("/keys");

      const second = await passwordStep(email, address);
      expect(second.last!.text).toContain("Use a passkey");
      expect((await second.get("/keys")).url).toBe("/sign-in/code");
      const step = await signInOptions(second);
      expect(step.allowCredentials.map((c) => c.id)).toEqual([authenticator.held[0]!.id.toString("base64url")]);
      expect((await send(second, authenticator.assert(step.challenge))).url).toBe("/keys");
      const listed = (await second.get("/account/two-factor")).text;
      expect(listed).toContain("<h3>Laptop</h3>");
      expect(listed).not.toContain("<dd>Never</dd>");
      const trail = await portal.db.all(
        "SELECT detail FROM audit a JOIN accounts c ON c.id = a.account_id WHERE c.email = ? AND event = 'signin'",
        [email],
      );
      expect(trail.filter((r) => r.detail === "with a passkey")).toHaveLength(2);
    },
    SLOW,
  );

  it(
    "refuses a replay, a counter not higher, an unverified user alone, another browser's challenge, another account's passkey",
    async () => {
      const { email, address, authenticator } = await accountWithPasskey();
      const other = await accountWithPasskey();
      // A wrong answer uses its challenge: the right one sent after it is a replay, refused.
      const client = clientFrom(address);
      const { challenge } = await signInOptions(client);
      expect((await send(client, authenticator.assert(challenge, 0, { badSignature: true }))).status).toBe(401);
      const replay = await send(client, authenticator.assert(challenge));
      expect(replay.status).toBe(401);
      expect(replay.text).toContain("The passkey did not sign you in");
      // The counter: as high as the last one accepted, or lower, is refused; higher passes.
      const first = clientFrom(address);
      expect(
        (await send(first, authenticator.assert((await signInOptions(first)).challenge, 0, { counter: 7 }))).url,
      ).toBe("/keys");
      const [row] = await portal.db.all("SELECT counter FROM passkeys WHERE credential_id = ?", [
        authenticator.held[0]!.id.toString("base64url"),
      ]);
      const last = Number(row!.counter);
      expect(last).toBe(7);
      for (const counter of [last, last - 1]) {
        const options = await signInOptions(client);
        expect((await send(client, authenticator.assert(options.challenge, 0, { counter }))).status, `${counter}`).toBe(
          401,
        );
      }
      // Alone, a user not verified (no PIN, no fingerprint) is refused: the passkey would stand for one factor only.
      const unverified = await signInOptions(client);
      const lie: Lie = { unverified: true, counter: last + 5 };
      expect((await send(client, authenticator.assert(unverified.challenge, 0, lie))).status).toBe(401);
      // Another browser's challenge, and another origin.
      const stranger = clientFrom(address);
      const theirs = await signInOptions(stranger);
      expect((await send(client, authenticator.assert(theirs.challenge))).status).toBe(401);
      const mine = await signInOptions(client);
      const elsewhere = authenticator.assert(mine.challenge, 0, { origin: "http://localhost:1" });
      expect((await send(client, elsewhere)).status).toBe(401);
      // Past this account's password, the other account's passkey does not finish the sign-in.
      const pending = await passwordStep(email, address);
      const step = await signInOptions(pending);
      expect((await send(pending, other.authenticator.assert(step.challenge))).status).toBe(401);
      expect((await pending.get("/keys")).url).toBe("/sign-in/code");
      // And after all that, the right answer with a higher counter signs in.
      const fine = await signInOptions(client);
      expect((await send(client, authenticator.assert(fine.challenge, 0, { counter: last + 10 }))).url).toBe("/keys");
    },
    SLOW,
  );

  it(
    "signs in once with one answer sent twice at once, and adds one passkey from one answer sent twice",
    async () => {
      const { address, authenticator, client: owner } = await accountWithPasskey();
      const client = clientFrom(address);
      const { challenge } = await signInOptions(client);
      const answer = authenticator.assert(challenge);
      const pages = await Promise.all([send(client, answer), send(client, answer)]);
      expect(count(pages, "/keys")).toBe(1);
      expect(pages.filter((p) => p.status === 401)).toHaveLength(1);
      // Two challenges answered with one counter value (a cloned authenticator), sent at once: one signs in.
      const twins = [clientFrom(address), clientFrom(address)];
      const counter = authenticator.held[0]!.counter + 1;
      const answers: unknown[] = [];
      for (const twin of twins)
        answers.push(authenticator.assert((await signInOptions(twin)).challenge, 0, { counter }));
      const cloned = await Promise.all(twins.map((twin, i) => send(twin, answers[i])));
      expect(count(cloned, "/keys")).toBe(1);
      expect(cloned.filter((p) => p.status === 401)).toHaveLength(1);

      await owner.get("/account/two-factor");
      const page = await owner.post("/account/two-factor/passkeys/new", { name: "Phone", current: PASSWORD });
      const made = new SoftAuthenticator(portal.url).register(optionsOn(page));
      const fields = { name: "Phone", response: JSON.stringify(made) };
      const token = owner.csrf;
      const both = await Promise.all(
        [1, 2].map(() => owner.post("/account/two-factor/passkeys", fields, { csrf: token })),
      );
      expect(both.map((p) => p.status).sort()).toEqual([200, 400]);
      const listed = (await owner.get("/account/two-factor")).text;
      expect(listed.match(/<h3>Phone<\/h3>/g)).toHaveLength(1);
    },
    SLOW,
  );

  it("answers a network's challenges up to the address limit, 60 asked at once: the rest 429, no row kept", async () => {
    const client = clientFrom(`10.9.${n++}.1`);
    await client.get("/sign-in");
    const rows = async () => Number((await portal.db.all("SELECT COUNT(*) AS n FROM passkey_challenges"))[0]!.n);
    const before = await rows();
    const pages = await Promise.all(
      Array.from({ length: 60 }, () => client.post("/sign-in/passkey/options", {}, { csrf: csrfOf(client) })),
    );
    const { failures } = DEFAULT_THROTTLE.address;
    expect(pages.filter((p) => p.status === 200)).toHaveLength(failures);
    const refused = pages.filter((p) => p.status === 429);
    expect(refused).toHaveLength(60 - failures);
    expect(Number(refused[0]!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await rows()) - before).toBe(failures);
  });

  it(
    "meets the account's limit with 40 wrong answers at once, and refuses the right one while locked",
    async () => {
      const { address, authenticator } = await accountWithPasskey();
      const client = clientFrom(address);
      const challenges: string[] = [];
      for (let i = 0; i < 41; i++) challenges.push((await signInOptions(client)).challenge);
      const wrong = challenges.slice(0, 40).map((c) => authenticator.assert(c, 0, { badSignature: true }));
      const pages = await Promise.all(wrong.map((answer) => send(client, answer)));
      const { failures, lockMs } = DEFAULT_THROTTLE.account;
      expect(pages.filter((p) => p.status === 401)).toHaveLength(failures);
      expect(pages.filter((p) => p.status === 429)).toHaveLength(40 - failures);
      const locked = await send(client, authenticator.assert(challenges[40]!));
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
      portal.clock.now += lockMs;
      const later = clientFrom(address);
      const { challenge } = await signInOptions(later);
      expect((await send(later, authenticator.assert(challenge))).url).toBe("/keys");
    },
    SLOW,
  );

  it(
    "needs the password to remove a passkey; the last one removed turns two-factor off",
    async () => {
      const { email, address, client, codes } = await accountWithPasskey();
      const page = await client.get("/account/two-factor");
      const id = /action="\/account\/two-factor\/passkeys\/([A-Za-z0-9_-]+)\/remove"/.exec(page.text)![1]!;
      const renamed = await client.post(`/account/two-factor/passkeys/${id}/rename`, { name: "Old laptop" });
      expect(renamed.text).toContain("<h3>Old laptop</h3>");
      const refused = await client.post(`/account/two-factor/passkeys/${id}/remove`, { current: "wrong password" });
      expect(refused.status).toBe(401);
      expect(refused.text).toContain("<h3>Old laptop</h3>");
      const removed = await client.post(`/account/two-factor/passkeys/${id}/remove`, { current: PASSWORD });
      expect(removed.text).toContain("two-factor sign-in is off");
      const told = await smtp.waitForMail(email, /A passkey was removed/);
      expect(told.body.replace(/\s+/g, " ")).toContain('The passkey "Old laptop" was removed');
      // Off: the password alone signs in, and the old recovery codes are gone.
      const plain = clientFrom(address);
      await plain.get("/sign-in");
      expect((await plain.post("/sign-in", { email, password: PASSWORD })).url).toBe("/keys");
      const left = await portal.db.all(
        "SELECT COUNT(*) AS n FROM recovery_codes r JOIN accounts a ON a.id = r.account_id WHERE a.email = ?",
        [email],
      );
      expect(Number(left[0]!.n)).toBe(0);
      expect(codes).toHaveLength(10);
    },
    SLOW,
  );

  it(
    "keeps two-factor on when the authenticator app is turned off and a passkey is left",
    async () => {
      const { email, address, client } = await accountWithPasskey();
      await client.get("/account/two-factor");
      const setup = await client.post("/account/two-factor/setup", { current: PASSWORD });
      const secret = /<code class="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replace(/ /g, "");
      const codeNow = () => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: portal.clock.now });
      expect((await client.post("/account/two-factor/confirm", { code: codeNow() })).text).toContain("recovery-codes");
      portal.clock.now += 30_000;
      await client.get("/account/two-factor");
      const off = await client.post("/account/two-factor/disable", { code: codeNow() });
      expect(off.text).toContain("The authenticator app no longer signs in; your passkeys do.");
      expect(off.text).toContain("Two-factor sign-in is <strong>on</strong>");
      await smtp.waitForMail(email, /The authenticator app no longer signs in/);
      const again = await passwordStep(email, address);
      expect(again.last!.text).toContain("use your passkey, or enter a recovery code");
    },
    SLOW,
  );
});
