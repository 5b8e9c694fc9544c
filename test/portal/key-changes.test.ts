// Issue 32's attacks on the key dashboard, over real HTTP on SQLite and PostgreSQL: rotations in a row and at once
// keep one old key per key and stop at the account's hourly limit, so the keys file stays the size it was; revoked
// keys leave the file after KEEP_REVOKED_MS; a new key's page is the answer to a redirect (POST, redirect, GET), and
// reloading it makes nothing and shows no key; a label with characters outside the safe set is refused.
import { readFile, stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEEP_REVOKED_MS, loadKeysFile } from "../../src/keys/keys-file.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import type { SmtpServer } from "./smtp-server.ts";

/** The key a page shows, if it shows one. */
const shownKey = (page: Page) =>
  /id="new-key" class="secret" type="text" readonly value="([A-Za-z0-9]{32})"/.exec(page.text)?.[1];
/** The dashboard ID of the key labelled `label` on the keys page. */
const keyId = (page: Page, label: string) =>
  new RegExp(`<h3>${label}</h3>[\\s\\S]*?href="/keys/([a-z0-9]+)/usage"`).exec(page.text)?.[1];

/** The password signUpAndVerify gives an account. */
const password = "correct horse battery";

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

describe.each(bothDatabases(() => postgres))("the key dashboard under attack, on $name", ({ name, url }) => {
  let portal: TestPortal;
  let accounts = 0;
  /** A new partner, signed in, on the keys page. */
  const partner = async () => {
    const client = new PortalClient(portal.url);
    await signUpAndVerify(client, smtp, { email: `keys-${accounts++}-${name.toLowerCase()}@example.test` });
    await client.get("/keys");
    return client;
  };
  /** The keys file's records of the key whose dashboard ID is `id`. */
  const recordsOf = async (id: string) =>
    (await loadKeysFile(portal.keysFile)).keys.filter((k) => k.name.endsWith(`.${id}`));
  /** The keys file's records of the client's account (`p.<account>.`), found from one of its keys. */
  const accountRecords = async (client: PortalClient, prefix?: string) => {
    const id = /href="\/keys\/([a-z0-9]+)\/usage"/.exec((await client.get("/keys")).text)![1]!;
    const own = prefix ?? (await recordsOf(id))[0]!.name.replace(/[^.]+$/, "");
    return (await loadKeysFile(portal.keysFile)).keys.filter((k) => k.name.startsWith(own));
  };
  /** A browser's reload of `page`: its GET again if it was the answer to a redirect, else the form sent again. */
  const reload = (client: PortalClient, page: Page, form: Record<string, string>, csrf: string) =>
    page.url.startsWith("/keys/new/") ? client.get(page.url) : client.post(page.url, form, { csrf });

  beforeAll(async () => {
    portal = await startTestPortal(smtp, { databaseUrl: await url(), keyLimit: 3 });
  });
  afterAll(async () => {
    await portal?.close();
  });

  it("keeps one old key per key through rotations in a row and 100 at once, and refuses those past the hourly limit", async () => {
    const client = await partner();
    const first = await client.post("/keys", { name: "rotated" });
    expect(shownKey(first)).toBeDefined();
    const id = keyId(await client.get("/keys"), "rotated")!;
    await client.get(`/keys/${id}/rotate`);
    const csrf = client.csrf;
    const rotate = () => client.post(`/keys/${id}/rotate`, { grace: "7d" }, { csrf });
    for (let i = 0; i < 5; i++) expect(shownKey(await rotate())).toBeDefined();
    const [record] = await recordsOf(id);
    expect(record!.previous).toHaveLength(1); // the key replaced last; those before it are refused
    expect((await client.get(`/keys/${id}/rotate`)).text).toContain("it is refused as soon as you rotate");
    const size = (await stat(portal.keysFile)).size;

    // The creation and 5 rotations took 6 of the account's 20 an hour: 14 of 100 sent at once pass.
    const pages = await Promise.all(Array.from({ length: 100 }, rotate));
    const statuses = pages.map((p) => p.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(14);
    expect(statuses.filter((s) => s === 429)).toHaveLength(86);
    expect(pages.find((p) => p.status === 429)!.headers.get("retry-after")).toBe("3600");
    expect(pages.filter((p) => shownKey(p)).length).toBe(14);
    const [after] = await recordsOf(id);
    expect(after!.previous).toHaveLength(1);
    expect((await stat(portal.keysFile)).size).toBe(size); // the same key, rotated: not a byte more
    expect(await rotate().then((p) => p.status)).toBe(429);
  });

  it("answers the creation form with a redirect: reloading the new key's page makes nothing and shows no key", async () => {
    const client = await partner();
    const form = { name: "reloaded" };
    const csrf = client.csrf;
    const page = await client.post("/keys", form, { csrf });
    const key = shownKey(page)!;
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    const again = await reload(client, page, form, csrf);
    expect(await accountRecords(client)).toHaveLength(1);
    expect(again.status).toBe(200);
    expect(shownKey(again)).toBeUndefined();
    expect(again.text).not.toContain(key);
    expect(again.text).toContain("was shown once");
    expect(page.url).toMatch(/^\/keys\/new\/[a-z0-9]{20}$/); // a GET page, the answer to a 303

    // A rotation is shown the same way.
    const id = keyId(await client.get("/keys"), "reloaded")!;
    await client.get(`/keys/${id}/rotate`);
    const rotateForm = { grace: "1h" };
    const rotated = await client.post(`/keys/${id}/rotate`, rotateForm, { csrf: client.csrf });
    const fresh = shownKey(rotated)!;
    expect(rotated.text).toContain("the old one works for 1 hour");
    const reloadedRotation = await reload(client, rotated, rotateForm, csrf);
    expect(shownKey(reloadedRotation)).toBeUndefined();
    expect(reloadedRotation.text).not.toContain(fresh);
    const [record] = await accountRecords(client);
    expect(record!.previous).toHaveLength(1); // one rotation, not two
  });

  it("shows a new key only to the session that made it", async () => {
    const client = await partner();
    const email = `keys-${accounts - 1}-${name.toLowerCase()}@example.test`;
    const other = new PortalClient(portal.url);
    await other.get("/sign-in");
    expect((await other.post("/sign-in", { email, password })).url).toBe("/keys");
    // The form's answer itself, not followed: where it sends the browser.
    const res = await fetch(new URL("/keys", portal.url), {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
        origin: new URL(portal.url).origin,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ name: "private", _csrf: client.csrf }),
    });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toMatch(/^\/keys\/new\/[a-z0-9]{20}$/);
    expect((await other.get(location)).status).toBe(404); // the same account, another session
    expect((await new PortalClient(portal.url).get(location)).url).toBe("/sign-in");
    const key = shownKey(await client.get(location))!; // not used up by the others
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((await other.get(location)).text).not.toContain(key);
  });

  it("drops revoked keys from the keys file after KEEP_REVOKED_MS, and still lists them as revoked", async () => {
    const client = await partner();
    for (const label of ["kept", "gone-1", "gone-2"]) await client.post("/keys", { name: label });
    for (const label of ["gone-1", "gone-2"]) {
      const id = keyId(await client.get("/keys"), label)!;
      await client.get(`/keys/${id}/revoke`);
      await client.post(`/keys/${id}/revoke`, {});
    }
    const before = await accountRecords(client);
    expect(before.filter((k) => k.revoked)).toHaveLength(2); // tombstones, for a while
    portal.clock.now += KEEP_REVOKED_MS + 3600_000;
    await client.get("/sign-in"); // the session has ended meanwhile
    await client.post("/sign-in", { email: `keys-${accounts - 1}-${name.toLowerCase()}@example.test`, password });
    await client.get("/keys");
    await client.post("/keys", { name: "later" }); // any change of the file drops what has expired
    const records = await accountRecords(client, before[0]!.name.replace(/[^.]+$/, ""));
    expect(records.map((r) => r.revoked)).toEqual([undefined, undefined]);
    const list = (await client.get("/keys")).text;
    expect(list.match(/<dd class="status-revoked">revoked<\/dd>/g)).toHaveLength(2);
  });

  it("refuses a label with characters outside the safe set, with a message next to the field", async () => {
    const client = await partner();
    const keysText = () => readFile(portal.keysFile, "utf8").catch(() => "");
    const before = await keysText();
    const labels = ["x;=1+1;", '=HYPERLINK("http://evil.example")', "@SUM(1)", "+1", "-1", "<b>x</b>", "a\u202eb"];
    for (const label of labels) {
      const page = await client.post("/keys", { name: label });
      expect(page.status, label).toBe(400);
      expect(page.text, label).toContain("Name may have letters, digits, spaces and - _ . , ( ) / &#39; only");
    }
    expect(await keysText()).toBe(before);
    expect((await client.post("/keys", { name: "Bob's shop (EU) ünï 2" })).status).toBe(200);
  });
});
