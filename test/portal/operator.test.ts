// The operator pages over real HTTP, against a real API handler that reloads the shared keys file as a server does
// (watching it): manual approval, suspension (only with a reason and a confirmation; the API refuses the account's
// keys within 2 s with api_key_suspended, the partner is mailed the reason, and the keys work again on
// reinstatement), an account's and a key's limits as the API enforces them, the keys `npm run keys` made, every
// account's trail, and a 404 for anyone but an operator. The first operator is made by `npm run portal -- admin`.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, loadKeysFile } from "../../src/keys/keys-file.ts";
import { createReloader } from "../../src/serve/http/reloader.ts";
import type { Reloader } from "../../src/serve/http/reloader.ts";
import { startTestApi } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

/** An activity table's HTML without the line-break opportunities and the detail's span (audit-table.ts): its text. */
const trailText = (html: string) => html.replace(/<wbr \/>|<span class="detail">|<\/span>/g, "");

const { BASE_URL: _vite, ...env } = process.env;
const PASSWORD = "correct horse battery";
/** How soon the API must apply a change made in the portal, ms. */
const WITHIN_MS = 2_000;

const shownKey = (page: Page) =>
  /id="new-key" class="secret" type="text" readonly value="([A-Za-z0-9]{32})"/.exec(page.text)?.[1];
const keyId = (page: Page, label: string) =>
  new RegExp(`<h3>${label}</h3>[\\s\\S]*?href="/keys/([a-z0-9]+)/revoke"`).exec(page.text)?.[1];
const accountId = (page: Page, email: string) =>
  new RegExp(`href="/admin/accounts/([a-z0-9]+)">${email}<`).exec(page.text)?.[1];

/** Runs `npm run portal -- admin <email>` against the portal's database; resolves with its stdout. */
const makeOperator = (portal: TestPortal, email: string) =>
  new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli/portal.ts", "admin", email],
      { encoding: "utf8", env: { ...env, DATABASE_URL: join(portal.dir, "portal.db") } },
      (err, stdout, stderr) => (err ? reject(new Error(`portal admin: ${stderr}`)) : resolve(stdout)),
    );
  });

describe("operator pages", () => {
  let smtp: SmtpServer;
  let api: TestApi;
  let portal: TestPortal;
  let reloader: Reloader;
  let operator: PortalClient;

  /** The API's answer to `key`. */
  const call = (key: string) => api.get(`/v1/sales/active.json?apikey=${key}`);
  /** Polls the API until every key answers `status` (moving its clock on, so no bucket runs dry); the ms it took. */
  const until = async (keys: string[], status: number): Promise<number> => {
    const started = performance.now();
    for (;;) {
      api.clock.now += 60;
      const statuses = await Promise.all(keys.map(async (k) => (await call(k)).status));
      if (statuses.every((s) => s === status)) return performance.now() - started;
      if (performance.now() - started > WITHIN_MS) throw new Error(`after ${WITHIN_MS} ms: ${statuses.join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const signIn = async (client: PortalClient, email: string) => {
    await client.get("/sign-in");
    return client.post("/sign-in", { email, password: PASSWORD });
  };
  /** A partner signed up, approved by the operator and signed in, with its account ID. */
  const approvedPartner = async (email: string) => {
    const client = new PortalClient(portal.url);
    await signUpAndVerify(client, smtp, { email });
    const id = accountId(await operator.get("/admin/accounts"), email)!;
    await operator.get(`/admin/accounts/${id}`);
    await operator.post(`/admin/accounts/${id}/approve`, {});
    expect((await signIn(client, email)).url).toBe("/keys");
    return { client, id };
  };
  const createKeyIn = async (client: PortalClient, name: string) => {
    await client.get("/keys");
    return shownKey(await client.post("/keys", { name }))!;
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    api = await startTestApi();
    portal = await startTestPortal(smtp, { keysFile: api.keysFile, apiUrl: api.url, approval: "manual" });
    reloader = createReloader(api.handler, api.dataDir, api.keysFile, { watchKeys: true });
    operator = new PortalClient(portal.url);
    await signUpAndVerify(operator, smtp, { email: "op@example.test", partner: "Operations" });
    expect(await makeOperator(portal, "op@example.test")).toMatch(/op@example\.test is an operator now/);
    expect((await signIn(operator, "op@example.test")).url).toBe("/keys");
  });
  afterAll(async () => {
    reloader?.stop();
    await portal?.close();
    await api?.close();
    await smtp?.stop();
  });

  it("PORTAL_APPROVAL=manual: a confirmed account waits, refused sign-in (403), until an operator approves it (mailed, on its trail)", async () => {
    const partner = new PortalClient(portal.url);
    await signUpAndVerify(partner, smtp, { email: "wait@example.test" });
    expect(partner.last?.text).toContain("An operator approves new accounts");
    expect((await partner.get("/keys")).url).toBe("/sign-in");
    const refused = await signIn(partner, "wait@example.test");
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("Waiting for approval");

    const list = await operator.get("/admin/accounts");
    expect(list.text).toMatch(/wait@example\.test[\s\S]*?waiting for approval/);
    const id = accountId(list, "wait@example.test")!;
    await operator.get(`/admin/accounts/${id}`);
    expect((await operator.post(`/admin/accounts/${id}/approve`, {})).text).toContain("The account is approved.");
    expect((await smtp.waitForMail("wait@example.test", /approved/)).body).toContain(`${portal.url}/sign-in`);
    expect((await signIn(partner, "wait@example.test")).url).toBe("/keys");
    const page = await operator.get(`/admin/accounts/${id}`);
    // The trail names the operator who did it (issue 36: every event names who did it).
    expect(trailText(page.text)).toMatch(
      /operator\.approved by op@example\.test<\/td>\s*<td class="who">op@example\.test<\/td>\s*<td>127\.0\.0\.1</,
    );
    // Approving twice, or an account that does not exist: nothing to do.
    expect((await operator.post(`/admin/accounts/${id}/approve`, {})).status).toBe(404);
    expect((await operator.post(`/admin/accounts/nosuchaccount/approve`, {})).status).toBe(404);
  });

  it("suspends an account only with a reason and a confirmation: the API refuses its keys within 2 s saying so, the partner is mailed the reason, its sessions end; reinstated, its keys work again", async () => {
    const { client, id } = await approvedPartner("suspend@example.test");
    const keys = [await createKeyIn(client, "one"), await createKeyIn(client, "two")];
    await until(keys, 200);

    const page = (await operator.get(`/admin/accounts/${id}`)).text;
    expect(page).toMatch(/<form method="post" action="\/admin\/accounts\/[a-z0-9]+\/suspend" novalidate>/);
    expect(page).toMatch(/<input\s+id="f-suspend-reason"\s+name="reason"/);
    expect(page).toMatch(/<input\s+type="checkbox"\s+name="confirm"\s+value="yes"\s+required/);
    // One click, a reason without the box, the box without a reason (or a blank one): nothing is done.
    const reason = "Keys shared in a public repository <script>";
    const refusals = [
      await operator.post(`/admin/accounts/${id}/suspend`, {}),
      await operator.post(`/admin/accounts/${id}/suspend`, { reason }),
      await operator.post(`/admin/accounts/${id}/suspend`, { reason: "   ", confirm: "yes" }),
    ];
    expect(refusals.map((r) => r.status)).toEqual([400, 400, 400]);
    expect(refusals[0]!.text).toMatch(
      /<p class="error" id="e-suspend-reason">Give a reason: it is mailed to the partner/,
    );
    expect(refusals[0]!.text).toMatch(/<p class="error" id="e-suspend-confirm">Tick the box to confirm/);
    expect(refusals[1]!.text).toContain('value="Keys shared in a public repository &lt;script&gt;"');
    expect(refusals[1]!.text).not.toContain('id="e-suspend-reason"');
    expect(refusals[2]!.text).toContain('id="e-suspend-reason"');
    await until(keys, 200);
    expect((await client.get("/keys")).url).toBe("/keys");
    expect(smtp.mails().some((m) => m.to === "suspend@example.test" && /suspended/.test(m.subject))).toBe(false);

    const done = await operator.post(`/admin/accounts/${id}/suspend`, { reason, confirm: "yes" });
    expect(done.text).toContain("The account is suspended");
    const refusedIn = await until(keys, 401);
    const refused = (await (await call(keys[0]!)).json()) as { code: string; detail: string };
    expect(refused.code).toBe("api_key_suspended");
    expect(refused.detail).toMatch(/suspended account/);
    const mail = await smtp.waitForMail("suspend@example.test", /suspended/);
    expect(mail.body).toContain(`Reason: ${reason}`);
    expect(mail.body).toContain("api_key_suspended");
    const file = await loadKeysFile(api.keysFile);
    expect(file.format).toBe(3);
    expect(file.keys.filter((k) => k.name.startsWith(`p.${id}.`)).every((k) => k.suspended)).toBe(true);
    expect((await client.get("/keys")).url).toBe("/sign-in");
    const signIn403 = await signIn(client, "suspend@example.test");
    expect(signIn403.status).toBe(403);
    expect(signIn403.text).toContain("This account is suspended");
    const suspended = (await operator.get(`/admin/accounts/${id}`)).text;
    expect(suspended).toMatch(/status-suspended">suspended</);
    expect(suspended).not.toContain('name="confirm"');
    // Suspending again: nothing to do.
    expect((await operator.post(`/admin/accounts/${id}/suspend`, { reason, confirm: "yes" })).status).toBe(404);

    await operator.post(`/admin/accounts/${id}/reinstate`, {});
    const acceptedIn = await until(keys, 200);
    expect((await loadKeysFile(api.keysFile)).format).toBe(2); // no key suspended: the format older servers read
    expect((await signIn(client, "suspend@example.test")).url).toBe("/keys");
    const trail = trailText((await operator.get(`/admin/accounts/${id}`)).text);
    expect(trail).toContain(
      "operator.suspended 2 keys refused; reason: &quot;Keys shared in a public repository &lt;script&gt;&quot; by op@example.test",
    );
    expect(trail).toContain("operator.reinstated 2 keys accepted again by op@example.test");
    console.log(
      `suspension refused by the API in ${refusedIn.toFixed(0)} ms, reinstatement in ${acceptedIn.toFixed(0)} ms`,
    );
  });

  it("an operator cannot suspend their own account", async () => {
    const own = accountId(await operator.get("/admin/accounts"), "op@example.test")!;
    await operator.get(`/admin/accounts/${own}`);
    const page = await operator.post(`/admin/accounts/${own}/suspend`, {});
    expect(page.status).toBe(400);
    expect(page.text).toContain("You cannot suspend your own account");
  });

  it("sets an account's limits on its keys and on those it makes later, a key's own, and the defaults again: the API enforces each", async () => {
    const { client, id } = await approvedPartner("limits@example.test");
    const first = await createKeyIn(client, "first");
    const limitOf = async (key: string, burst: string) => {
      await until([key], 200);
      const deadline = performance.now() + WITHIN_MS;
      for (;;) {
        api.clock.now += 60;
        const seen = (await call(key)).headers.get("ratelimit-limit");
        if (seen === burst || performance.now() > deadline) return seen;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    expect(await limitOf(first, "200")).toBe("200"); // the API's default: 50 a second, bursts of 200

    await operator.get(`/admin/accounts/${id}`);
    const bad = await operator.post(`/admin/accounts/${id}/limits`, { action: "set", rate: "fast", burst: "-1" });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/<p class="error" id="e-account-rate">Rate must be a number/);
    expect(bad.text).toMatch(/<p class="error" id="e-account-burst">Burst must be a whole number/);
    await operator.post(`/admin/accounts/${id}/limits`, { action: "set", rate: "5", burst: "20" });
    expect(await limitOf(first, "20")).toBe("20");
    const later = await createKeyIn(client, "later");
    expect(await limitOf(later, "20")).toBe("20");

    const firstId = keyId(await client.get("/keys"), "first")!;
    await operator.get(`/admin/accounts/${id}`);
    await operator.post(`/admin/keys/p.${id}.${firstId}/limits`, { action: "set", rate: "2", burst: "" });
    expect(await limitOf(first, "8")).toBe("8"); // no burst given: the API's 4 seconds of the rate
    expect(await limitOf(later, "20")).toBe("20");

    await operator.get(`/admin/accounts/${id}`);
    await operator.post(`/admin/accounts/${id}/limits`, { action: "default" });
    expect(await limitOf(first, "200")).toBe("200");
    expect(await limitOf(later, "200")).toBe("200");
    const trail = trailText((await operator.get(`/admin/accounts/${id}`)).text);
    expect(trail).toContain("operator.account_limits rate 5/s burst 20 on 1 key by op@example.test");
    expect(trail).toContain(`operator.key_limits &quot;p.${id}.${firstId}&quot;: rate 2/s by op@example.test`);
  });

  it("shows the keys npm run keys made under the operator's keys, and sets their limits", async () => {
    const cli = await createKey(api.keysFile, "made-by-cli");
    const page = await operator.get("/admin/operator-keys");
    expect(page.text).toContain("<h3>made-by-cli</h3>");
    expect(page.text).toContain("<h3>test</h3>");
    expect(page.text).not.toMatch(/<h3>p\./); // the partners' keys are under their accounts
    await operator.post("/admin/keys/made-by-cli/limits", { action: "set", rate: "1", burst: "3" });
    await until([cli], 200);
    const deadline = performance.now() + WITHIN_MS;
    let burst: string | null = null;
    while (burst !== "3" && performance.now() < deadline) {
      api.clock.now += 60;
      burst = (await call(cli)).headers.get("ratelimit-limit");
    }
    expect(burst).toBe("3");
    expect((await operator.post("/admin/keys/no-such-key/limits", { action: "default" })).status).toBe(404);
    expect(trailText((await operator.get("/account")).text)).toContain(
      "operator.key_limits &quot;made-by-cli&quot;: rate 1/s burst 3",
    );
  });

  it("lists every account's events, operator actions included, with time and address", async () => {
    const page = await operator.get("/admin/audit");
    expect(page.status).toBe(200);
    page.text = trailText(page.text);
    for (const text of [
      "operator.approved",
      "operator.suspended",
      "signin",
      "wait@example.test",
      "suspend@example.test",
    ])
      expect(page.text).toContain(text);
    expect(page.text).toMatch(
      /<time datetime="[^"]+">[^<]+<\/time><\/td>\s*<td class="who"><a href="\/admin\/accounts\/[a-z0-9]+">/,
    );
    expect(page.text).toContain("<td>127.0.0.1</td>");
  });

  it("answers 404 to every operator page and action for a partner and for no one signed in, changing nothing", async () => {
    const { client: partner, id } = await approvedPartner("curious@example.test");
    const anon = new PortalClient(portal.url);
    const before = await loadKeysFile(api.keysFile);
    for (const client of [partner, anon]) {
      await client.get(client === anon ? "/sign-in" : "/keys");
      const token = client.csrf;
      const pages = [
        await client.get("/admin"),
        await client.get("/admin/accounts"),
        await client.get(`/admin/accounts/${id}`),
        await client.get("/admin/operator-keys"),
        await client.get("/admin/audit"),
        await client.post(`/admin/accounts/${id}/suspend`, {}, { csrf: token }),
        await client.post(`/admin/accounts/${id}/limits`, { action: "set", rate: "1" }, { csrf: token }),
        await client.post("/admin/keys/test/limits", { action: "set", rate: "1" }, { csrf: token }),
      ];
      expect(pages.map((p) => p.status)).toEqual(Array(8).fill(404));
    }
    expect(await loadKeysFile(api.keysFile)).toEqual(before);
    expect((await partner.get("/keys")).text).not.toContain('href="/admin/accounts"');
    expect((await operator.get("/keys")).text).toContain('href="/admin/accounts"');
  });
});
