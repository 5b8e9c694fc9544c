// The portal under attack, each case asserted over real HTTP: forged forms, other accounts' keys, markup and SQL in
// every field, password guessing (with the injected clock to end the lock), a stolen session cookie.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const keyIdOf = (text: string, label: string) =>
  new RegExp(`<h3>${label}</h3>[\\s\\S]*?href="/keys/([a-z0-9]+)/revoke"`).exec(text)?.[1];

describe("portal attack cases", () => {
  let smtp: SmtpServer;
  let portal: TestPortal;
  let alice: PortalClient;
  let mallory: PortalClient;
  let aliceKey: string;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    portal = await startTestPortal(smtp);
    alice = new PortalClient(portal.url);
    mallory = new PortalClient(portal.url);
    await signUpAndVerify(alice, smtp, { email: "alice@example.test" });
    await signUpAndVerify(mallory, smtp, { email: "mallory@example.test" });
    await alice.get("/keys");
    await alice.post("/keys", { name: "alice-prod" });
    aliceKey = keyIdOf((await alice.get("/keys")).text, "alice-prod")!;
  });
  afterAll(async () => {
    await portal?.close();
    await smtp?.stop();
  });

  it("refuses a state change without the CSRF token, with another's token, or from another origin (403), changing nothing", async () => {
    const before = await readFile(portal.keysFile, "utf8");
    await mallory.get("/keys");
    const cases = [
      await mallory.post("/keys", { name: "no token" }, { csrf: null }),
      await mallory.post("/keys", { name: "wrong token" }, { csrf: "A".repeat(43) }),
      await mallory.post("/keys", { name: "alice's token" }, { csrf: alice.csrf }),
      await mallory.post("/keys", { name: "cross-site" }, { origin: "https://evil.example" }),
      await mallory.post("/keys", { name: "no origin" }, { origin: null }),
      await mallory.post("/sign-out", {}, { csrf: null }),
    ];
    expect(cases.map((p) => p.status)).toEqual([403, 403, 403, 403, 403, 403]);
    expect(await readFile(portal.keysFile, "utf8")).toBe(before);
    expect((await mallory.get("/keys")).status).toBe(200); // still signed in: the forged sign-out did nothing
  });

  it("answers 404 to another account's key ID in a URL, and changes nothing", async () => {
    const before = await readFile(portal.keysFile, "utf8");
    await mallory.get("/keys");
    const token = mallory.csrf;
    const pages = [
      await mallory.get(`/keys/${aliceKey}/rotate`),
      await mallory.get(`/keys/${aliceKey}/revoke`),
      await mallory.post(`/keys/${aliceKey}/rotate`, { grace: "now" }, { csrf: token }),
      await mallory.post(`/keys/${aliceKey}/revoke`, {}, { csrf: token }),
      await mallory.post(`/keys/${aliceKey}/revoke`, { id: aliceKey, account: "x" }, { csrf: token }),
      await mallory.get(`/keys/..%2F${aliceKey}/revoke`),
    ];
    expect(pages.map((p) => p.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(await readFile(portal.keysFile, "utf8")).toBe(before);
    expect((await alice.get("/keys")).text).toContain("alice-prod");
  });

  it("shows script in a name, a partner name or an email as text", async () => {
    const client = new PortalClient(portal.url);
    const script = "<script>alert(1)</script>";
    await signUpAndVerify(client, smtp, { email: "x@example.test", partner: `${script}"'&` });
    await client.get("/keys");
    // A key label is refused outside its safe set (400), and shown back in its field as text.
    const keys = await client.post("/keys", { name: `${script}<img src=x onerror=alert(2)>` });
    expect(keys.status).toBe(400);
    const account = await client.get("/account");
    const form = await client.post("/sign-up", {
      email: `"><script>alert(3)</script>@x.test`,
      password: "x",
      partner: script,
    });
    for (const page of [keys, account, form]) {
      expect(page.text).not.toMatch(/<script>alert|<img src=x/);
      expect(page.text).toContain("&lt;script&gt;alert(");
    }
    expect(account.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;");
  });

  it("takes SQL metacharacters in every field as data", async () => {
    const sql = `'); DROP TABLE accounts; --`;
    const client = new PortalClient(portal.url);
    const email = `o'brien+x--y@example.test`;
    await signUpAndVerify(client, smtp, { email, partner: `Robert${sql}`, password: `pa' OR '1'='1${sql}` });
    await client.get("/keys");
    // A key label takes quotes, dashes and brackets (not ; or =, outside its safe set).
    expect((await client.post("/keys", { name: `k' OR 1 --') DROP TABLE accounts --` })).status).toBe(200);
    expect((await client.get("/keys")).text).toContain("k&#39; OR 1 --&#39;) DROP TABLE accounts --");
    const anon = new PortalClient(portal.url);
    for (const [path, fields] of [
      ["/sign-in", { email: `' OR 1=1 --`, password: sql }],
      ["/sign-in", { email, password: `' OR '1'='1` }],
      ["/reset", { email: `a@b.c'${sql}` }],
      ["/sign-up", { email: `a${sql}@b.c`, password: sql + sql, partner: sql }],
    ] as const) {
      await anon.get(path);
      expect([200, 400, 401]).toContain((await anon.post(path, fields)).status);
    }
    await anon.get(`/verify?token=${encodeURIComponent(sql)}`);
    await anon.get("/sign-in");
    const signedIn = await anon.post("/sign-in", { email, password: `pa' OR '1'='1${sql}` });
    expect(signedIn.url).toBe("/keys");
    expect((await alice.get("/keys")).status).toBe(200); // the accounts table is still there
  });

  it("locks an account after repeated wrong passwords: 50 tries, the right one refused until the lock ends", async () => {
    const victim = new PortalClient(portal.url);
    await signUpAndVerify(victim, smtp, { email: "victim@example.test", password: "the right password" });
    const guesser = new PortalClient(portal.url);
    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) {
      await guesser.get("/sign-in");
      statuses.push((await guesser.post("/sign-in", { email: "victim@example.test", password: `guess ${i}` })).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(40).fill(429));
    await guesser.get("/sign-in");
    const right = await guesser.post("/sign-in", { email: "victim@example.test", password: "the right password" });
    expect(right.status).toBe(429);
    const wait = Number(right.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(15 * 60);
    portal.clock.now += wait * 1000;
    await guesser.get("/sign-in");
    expect((await guesser.post("/sign-in", { email: "victim@example.test", password: "the right password" })).url).toBe(
      "/keys",
    );
  });

  it("refuses a stolen session cookie once its owner has signed out, and after a password change", async () => {
    const owner = new PortalClient(portal.url);
    await signUpAndVerify(owner, smtp, { email: "stolen@example.test", password: "first password 1" });
    const thief = new PortalClient(portal.url);
    thief.cookies.set("__Host-session", owner.cookies.get("__Host-session")!);
    expect((await thief.get("/keys")).url).toBe("/keys");
    await owner.get("/account");
    await owner.post("/account/password", { current: "first password 1", password: "second password 2" });
    expect((await owner.get("/keys")).url).toBe("/keys"); // the owner's browser got a new session
    expect((await thief.get("/keys")).url).toBe("/sign-in");
    thief.cookies.set("__Host-session", owner.cookies.get("__Host-session")!);
    await owner.get("/keys");
    await owner.post("/sign-out", {});
    expect((await thief.get("/keys")).url).toBe("/sign-in");
  });

  it("ends a session after 30 idle minutes and 12 hours at most", async () => {
    const client = new PortalClient(portal.url);
    await signUpAndVerify(client, smtp, { email: "idle@example.test" });
    portal.clock.now += 29 * 60_000;
    expect((await client.get("/keys")).url).toBe("/keys");
    portal.clock.now += 30 * 60_000;
    expect((await client.get("/keys")).url).toBe("/sign-in");
    await client.post("/sign-in", { email: "idle@example.test", password: "correct horse battery" });
    let minutes = 0; // active every 25 minutes until the session ends
    while (minutes < 24 * 60 && (await client.get("/keys")).url === "/keys") {
      portal.clock.now += 25 * 60_000;
      minutes += 25;
    }
    expect(minutes).toBeGreaterThanOrEqual(12 * 60);
    expect(minutes).toBeLessThan(12 * 60 + 25);
  });
});
