// The key dashboard against the real API: keys made, rotated and revoked in the portal are written to the keys file
// the API reads (a real handler on port 0, reloaded as its reloader would), and `npm run keys` writes beside it.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, loadKeysFile, setKeyLimits } from "../../src/keys/keys-file.ts";
import { startTestApi, withKey } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

/** The key a page shows once, and its dashboard ID (from the page's links after it). */
const shownKey = (page: Page) =>
  /id="new-key" class="secret" type="text" readonly value="([A-Za-z0-9]{32})"/.exec(page.text)?.[1];
/** The dashboard ID of the key labelled `label` on the keys page. */
const keyId = (page: Page, label: string) =>
  new RegExp(`<h3>${label}</h3>[\\s\\S]*?href="/keys/([a-z0-9]+)/revoke"`).exec(page.text)?.[1];

describe("portal keys reach the API", () => {
  let smtp: SmtpServer;
  let api: TestApi;
  let portal: TestPortal;
  let client: PortalClient;
  /** The API's answer to the sale list with `key`, after the API has reloaded the keys file. */
  const status = async (key: string) => {
    await api.handler.reload();
    return (await api.get(withKey({ ...api, key }, "/v1/sales/active.json"))).status;
  };
  const create = async (name: string) => {
    await client.get("/keys");
    return client.post("/keys", { name });
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    api = await startTestApi();
    portal = await startTestPortal(smtp, { keysFile: api.keysFile, apiUrl: api.url, keyLimit: 3 });
    portal.clock.now = api.clock.now * 1000; // one time for both
    client = new PortalClient(portal.url);
    await signUpAndVerify(client, smtp, { email: "keys@example.test" });
  });
  afterAll(async () => {
    await portal?.close();
    await api?.close();
    await smtp?.stop();
  });

  it("creates a key shown once, in snippets that send it in X-Api-Key, that works against the API; only its hash is stored", async () => {
    const page = await create("production site");
    const key = shownKey(page)!;
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(page.text).toContain(`curl -H &#39;X-Api-Key: ${key}&#39; &#39;${api.url}/v1/sales/active.json&#39;`);
    expect(page.text).toContain(`headers={&quot;X-Api-Key&quot;: &quot;${key}&quot;}`);
    expect(await status(key)).toBe(200);
    const list = await client.get("/keys");
    expect(list.text).not.toContain(key);
    expect(list.text).toContain(`${key.slice(0, 4)}…${key.slice(-4)}`);
    expect(list.text).toContain("production site");
    for (const file of [api.keysFile, join(portal.dir, "portal.db"), join(portal.dir, "portal.db-wal")])
      expect(await readFile(file, "latin1").catch(() => "")).not.toContain(key);
  });

  it("rotates with a grace period: both keys work until it ends, then only the new one", async () => {
    const old = shownKey(await create("rotating"))!;
    const id = keyId(await client.get("/keys"), "rotating")!;
    expect((await client.get(`/keys/${id}/rotate`)).text).toContain("The current key keeps working");
    const page = await client.post(`/keys/${id}/rotate`, { grace: "1h" });
    const fresh = shownKey(page)!;
    expect(page.text).toContain("the old one works for 1 hour");
    expect(await status(fresh)).toBe(200);
    expect(await status(old)).toBe(200);
    api.clock.now += 3601;
    expect(await status(old)).toBe(401);
    expect(await status(fresh)).toBe(200);
    api.clock.now -= 3601;
  });

  it("revokes after a confirmation page: the API refuses the key", async () => {
    const key = shownKey(await create("short-lived"))!;
    const id = keyId(await client.get("/keys"), "short-lived")!;
    expect(await status(key)).toBe(200);
    const confirm = await client.get(`/keys/${id}/revoke`);
    expect(confirm.text).toContain("Revoke the key");
    expect(await status(key)).toBe(200); // the confirmation page changes nothing
    const done = await client.post(`/keys/${id}/revoke`, {});
    expect(done.text).toContain("The key was revoked.");
    expect(await status(key)).toBe(401);
    expect((await client.get(`/keys/${id}/revoke`)).status).toBe(404);
  });

  it("refuses a key past the account's limit, next to the name field", async () => {
    // Live now: "production site" and "rotating" (limit 3 in this file).
    expect(shownKey(await create("third"))).toBeDefined();
    const page = await create("fourth");
    expect(page.status).toBe(409);
    expect(page.text).toMatch(/<p class="error" id="e-name">You have 3 keys, the most an account may have/);
    const names = (await loadKeysFile(api.keysFile)).keys.filter((k) => k.name.startsWith("p.") && !k.revoked);
    expect(names).toHaveLength(3);
  });

  it("loses nothing when npm run keys and the portal write the keys file at once", async () => {
    const other = new PortalClient(portal.url);
    await signUpAndVerify(other, smtp, { email: "busy@example.test" });
    await other.get("/keys");
    const token = other.csrf;
    const made = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => createKey(api.keysFile, `cli-${i}`)),
      ...Array.from({ length: 3 }, (_, i) =>
        other.post("/keys", { name: `portal ${i}`, _csrf: token }, { csrf: token }),
      ),
    ]);
    const keys = made.map((m) => (typeof m === "string" ? m : shownKey(m)!));
    expect(keys.every((k) => /^[A-Za-z0-9]{32}$/.test(k))).toBe(true);
    for (const key of keys) expect(await status(key)).toBe(200);
  });

  it("shows each key's limits as the API enforces them: the API's default, or its own", async () => {
    const partner = new PortalClient(portal.url);
    await signUpAndVerify(partner, smtp, { email: "limits@example.test" });
    await partner.get("/keys");
    const key = shownKey(await partner.post("/keys", { name: "measured" }))!;
    const name = (await loadKeysFile(api.keysFile)).keys.at(-1)!.name; // the key just made, p.<account>.<key>
    expect(name).toMatch(new RegExp(`^p\\.[a-z0-9]+\\.${keyId(await partner.get("/keys"), "measured")}$`));
    const shown = async () =>
      /<h3>measured<\/h3>[\s\S]*?<dt>Limits<\/dt>\s*<dd>([^<]*)<\/dd>/.exec((await partner.get("/keys")).text)?.[1];
    const enforced = async () => {
      await api.handler.reload();
      return (await api.get(`/v1/sales/active.json?apikey=${key}`)).headers.get("ratelimit-limit");
    };
    expect(await shown()).toBe("50 requests a second, in bursts of up to 200 (the API&#39;s default)");
    expect(await enforced()).toBe("200");
    await setKeyLimits(api.keysFile, name, { rate: 5, burst: 20 });
    expect(await shown()).toBe("5 requests a second, in bursts of up to 20");
    expect(await enforced()).toBe("20");
    await setKeyLimits(api.keysFile, name, "default");
    await setKeyLimits(api.keysFile, name, { rate: 2 });
    expect(await shown()).toBe("2 requests a second, in bursts of up to 8");
    expect(await enforced()).toBe("8");
    expect((await partner.get("/account")).text).toContain(
      "Each key may make 50 requests a second, in bursts of up to 200",
    );
  });
});
