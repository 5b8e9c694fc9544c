// The usage pages in a real browser (Debian's Chromium, driven by playwright-core) at a phone's size: a partner signs
// in, makes a key, and a real API server counts known requests with it (a 200, a 304, a 404, two 429s) into the
// portal's database; the dashboard shows the key's last use, its usage page shows the chart and exactly those
// figures in its table, the CSV downloads with them, and the account's page adds up its keys; an operator sees the
// accounts busiest first and the account's usage. Every page is checked with axe-core (no serious or critical
// violations), must fit the screen's width (390 px) and break no CSP rule, and no usage table may be taller than two
// screens with every fold open; a screenshot of each is kept to be looked at.
import { mkdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount, updateAccount } from "../../src/portal/store/accounts.ts";
import { startUsage } from "../../src/usage/hand-over.ts";
import type { Usage } from "../../src/usage/hand-over.ts";
import { startTestApi, T0, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { checkPage } from "./page-check.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "flash-sale-portal-usage-screenshots");

describe("the usage pages in Chromium", () => {
  let smtp: SmtpServer;
  let api: TestApi;
  let usage: Usage;
  let portal: TestPortal;
  let browser: Browser;
  const problems: string[] = [];

  /** Checks the page as it is now (axe, width) and keeps a screenshot named `name`. */
  async function check(page: Page, name: string): Promise<void> {
    problems.push(...(await checkPage(page, name, SHOTS)));
    // On the usage pages every violation, not only the serious and critical ones checkPage reports (issue 35: 0 at
    // 390 px; the other pages are item 5's).
    if (!new URL(page.url()).pathname.endsWith("/usage")) return;
    const ids = await page.evaluate<string[]>(
      `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => v.id + " (" + v.impact + ")"))`,
    );
    problems.push(...ids.map((id) => `${name}: axe ${id}`));
  }

  /** A phone-sized browser signed in as `email`. */
  async function signedIn(email: string, password: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`script error: ${e.message}`));
    await page.goto(`${portal.url}/sign-in`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    return { context, page };
  }

  /** The cells of the row headed `name` (all, 2xx, 304, 4xx, 429, 5xx) of the table captioned `caption`, as shown. */
  const row = (page: Page, caption: string | RegExp, name: string) =>
    page
      .getByRole("table", { name: caption })
      .getByRole("row", { name: new RegExp(`^${name}`) })
      .getByRole("cell")
      .allTextContents();

  /** Opens every fold of the page, and answers the height (px) of its tallest table: at most two screens. */
  async function tallestTable(page: Page): Promise<number> {
    await page.locator("details").evaluateAll((folds) => folds.forEach((d) => d.setAttribute("open", "")));
    const heights = await page
      .locator("table")
      .evaluateAll((tables) => tables.map((t) => t.getBoundingClientRect().height));
    const tallest = Math.max(0, ...heights);
    if (tallest > 2 * 844) problems.push(`${page.url()}: a table ${tallest} px tall`);
    return tallest;
  }

  beforeAll(async () => {
    await rm(SHOTS, { recursive: true, force: true });
    await mkdir(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    // The API server hands its counts to the portal's database when the test says (its clock stands at T0, 17:00).
    const databaseUrl = join(await tempDir("fsa-usage-ui-"), "portal.db");
    usage = startUsage({ databaseUrl, flushMs: 3_600_000, maxRows: 1000, figuresTtlMs: 0, now: () => T0 * 1000 });
    api = await startTestApi(undefined, { usage });
    portal = await startTestPortal(smtp, { keysFile: api.keysFile, apiUrl: api.url, databaseUrl });
    portal.clock.now = T0 * 1000;
    for (const [email, partner, role] of [
      ["shop@example.test", "Shop Partners", "partner"],
      ["operator@example.test", "Operations", "admin"],
    ] as const) {
      const made = await createAccount(
        portal.db,
        { email, partner, password: await hashPassword(`${role} password 123`) },
        portal.clock.now,
      );
      // The partner's keys get a burst of 3, so that with the API's clock standing still the 4th request is a 429.
      await updateAccount(portal.db, made!.id, {
        role,
        verified: portal.clock.now,
        ...(role === "partner" ? { rate: 1, burst: 3 } : {}),
      });
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await usage?.close();
    await portal?.close();
    await api?.close();
    await smtp?.stop();
  });

  it("shows the requests made with a key on its usage page, as a chart, a table and a CSV download", async () => {
    const { context, page } = await signedIn("shop@example.test", "partner password 123");
    await page.getByLabel("Name").fill("storefront");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = await page.locator("#new-key").inputValue();
    await api.handler.reload();

    // A 200, a 304, a 404, then two 429s: the burst of 3 is spent.
    const get = (path: string, headers: Record<string, string> = {}) =>
      api.get(`${path}?apikey=${key}`, { headers: { "Accept-Encoding": "identity", ...headers } });
    const first = await get("/v1/sales/active.json");
    let bytes = (await first.arrayBuffer()).byteLength;
    const statuses = [first.status];
    for (const [path, headers] of [
      ["/v1/sales/active.json", { "If-None-Match": first.headers.get("etag")! }],
      ["/v1/products/999999/detail.json", {}],
      ["/v1/sales/active.json", {}],
      ["/v1/sales/active.json", {}],
    ] as const) {
      const res = await get(path, headers);
      bytes += (await res.arrayBuffer()).byteLength;
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 304, 404, 429, 429]);
    await usage.flush();

    await page.getByRole("link", { name: "Back to your keys" }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    expect(await page.locator('dt:text-is("Last used") + dd').textContent()).toBe("2026-11-22 17:00 UTC");
    await check(page, "u1-keys-last-used");
    await page.getByRole("link", { name: "Usage of storefront" }).click();
    await page.getByRole("heading", { name: "Usage" }).waitFor();
    const chart = page.getByRole("img", { name: /Requests per hour of the key “storefront”/ });
    expect(await chart.isVisible()).toBe(true);
    expect(await chart.locator("rect").count()).toBe(4); // the current hour's bar: 2xx, 304, 4xx, 429
    // The newest day's hours are open, the days before folded.
    const today = /Requests per hour by status on 2026-11-22/;
    expect(await row(page, today, "17:00")).toEqual(["5", "1", "1", "1", "2", "0"]);
    expect(await row(page, today, "Day total")).toEqual(["5", "1", "1", "1", "2", "0"]);
    expect(await page.getByRole("table", { name: /on 2026-11-21/ }).isVisible()).toBe(false);
    const endpoints = /Requests by endpoint/;
    expect(await row(page, endpoints, "Sale lists")).toEqual(["4", "1", "1", "0", "2", "0"]);
    expect(await row(page, endpoints, "Products")).toEqual(["1", "0", "0", "1", "0", "0"]);
    await check(page, "u2-key-usage");
    expect(await tallestTable(page)).toBeGreaterThan(0);
    await check(page, "u3-key-usage-every-day-open");

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download as CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^usage-key-[a-z0-9]+-48h\.csv$/);
    const csv = (await readFile(await download.path(), "utf8")).trimEnd().split("\r\n");
    expect(csv).toHaveLength(3);
    // Text cells quoted; a row per key and endpoint with requests (the 404's body bytes on products).
    expect(csv[1]).toMatch(/^"2026-11-22T17:00:00Z","storefront","product",1,0,0,1,0,0,\d+$/);
    expect(csv[2]).toMatch(/^"2026-11-22T17:00:00Z","storefront","sale_list",4,1,1,0,2,0,\d+$/);
    expect(Number(csv[1]!.split(",").at(-1)) + Number(csv[2]!.split(",").at(-1))).toBe(bytes);

    await page.getByRole("link", { name: "30 days" }).click();
    await page.getByText("per day over the last 30 days").waitFor();
    expect(await row(page, /Requests per day by status in November 2026/, "2026-11-22")).toEqual([
      "5",
      "1",
      "1",
      "1",
      "2",
      "0",
    ]);
    await check(page, "u4-key-usage-30d");
    await tallestTable(page);
    await check(page, "u4b-key-usage-30d-every-month-open");
    await page.getByRole("link", { name: "90 days" }).click();
    await page.getByText("per day over the last 90 days").waitFor();
    await tallestTable(page);
    await check(page, "u4c-key-usage-90d-every-month-open");

    await page.getByRole("link", { name: "Back to your keys" }).click();
    await page.getByRole("link", { name: "Usage of all your keys" }).click();
    expect(await row(page, /Requests by key/, "storefront")).toEqual(["5", "1", "1", "1", "2", "0"]);
    expect(await row(page, /Requests by endpoint/, "All endpoints")).toEqual(["5", "1", "1", "1", "2", "0"]);
    await check(page, "u5-account-usage");
    await tallestTable(page);
    await context.close();
  });

  it("lets an operator see the accounts busiest first, and an account's usage", async () => {
    const { context, page } = await signedIn("operator@example.test", "admin password 123");
    await page.getByRole("link", { name: "Operator" }).click();
    await page.getByRole("link", { name: "Busiest, last 24 hours" }).click();
    const first = page.locator("ul.key > li h2").first();
    expect(await first.textContent()).toBe("shop@example.test");
    await check(page, "u6-operator-busiest");
    await page.getByRole("link", { name: "shop@example.test" }).click();
    await page.getByRole("link", { name: "Usage of every key of the account" }).click();
    expect(await row(page, /Requests by endpoint/, "All endpoints")).toEqual(["5", "1", "1", "1", "2", "0"]);
    await check(page, "u7-operator-account-usage");
    await context.close();

    console.log(`usage screenshots: ${SHOTS}`);
    expect(problems).toEqual([]);
  });
});
