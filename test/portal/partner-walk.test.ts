// Issue 35 as a new partner walks it, in Chromium at a desktop's and a phone's width: sign up and confirm the address
// from the mail, open the reference (/docs) from the portal and find the way back, make a key, send a request from the
// console with it (the key in X-Api-Key), call the API with the key in each header and in the query, and see those
// requests on the usage page under the key's label and each endpoint. axe-core finds no violation of any impact on
// any page at either width; no page asks another host for anything; the screenshots are kept to be looked at.
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { startUsage } from "../../src/usage/hand-over.ts";
import type { Usage } from "../../src/usage/hand-over.ts";
import { freePort, startTestApi, T0, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { checkPage } from "./page-check.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { linkIn, startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "flash-sale-partner-walk-screenshots");
const WIDTHS = {
  desktop: { viewport: { width: 1280, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
} as const;

describe("a new partner's walk through the portal, the reference, the console and the usage pages", () => {
  let smtp: SmtpServer;
  let api: TestApi;
  let usage: Usage;
  let portal: TestPortal;
  let browser: Browser;
  const problems: string[] = [];
  const elsewhere: string[] = [];

  beforeAll(async () => {
    await rm(SHOTS, { recursive: true, force: true });
    await mkdir(SHOTS, { recursive: true });
    const portalPort = await freePort();
    const databaseUrl = join(await tempDir("fsa-walk-"), "portal.db");
    // The API counts into the portal's database when the test hands its counts over (its clock stands at T0).
    usage = startUsage({ databaseUrl, flushMs: 3_600_000, maxRows: 1000, figuresTtlMs: 0, now: () => T0 * 1000 });
    [smtp, api] = await Promise.all([
      startSmtpServer(),
      startTestApi(undefined, { usage, portalUrl: `http://127.0.0.1:${portalPort}` }),
    ]);
    portal = await startTestPortal(smtp, { keysFile: api.keysFile, apiUrl: api.url, databaseUrl, port: portalPort });
    portal.clock.now = T0 * 1000;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await usage?.close();
    await portal?.close();
    await api?.close();
    await smtp?.stop();
  });

  /** A browser of `width` whose requests to any host but the portal and the API are problems. */
  async function open(width: keyof typeof WIDTHS): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext(WIDTHS[width]);
    context.on("request", (r) => {
      const url = r.url();
      if (!url.startsWith(portal.url) && !url.startsWith(api.url) && !url.startsWith("data:")) elsewhere.push(url);
    });
    const page = await context.newPage();
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`script error: ${e.message}`));
    return { context, page };
  }

  /** The page checked at its width (axe, any impact; no wider than the screen); its screenshot `<name>-<width>`. */
  const check = async (page: Page, name: string, width: keyof typeof WIDTHS) =>
    problems.push(...(await checkPage(page, `${name}-${width}`, SHOTS)));

  it.each(["desktop", "phone"] as const)("walks it at a %s's width", async (width) => {
    const email = `walk-${width}@example.test`;
    const { context, page } = await open(width);

    // Sign up, and confirm the address from the mail.
    await page.goto(`${portal.url}/sign-up`);
    await check(page, "01-sign-up", width);
    await page.getByLabel("Partner name").fill(`Walk ${width}`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(`a ${width} walk password`);
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("heading", { name: "Check your mail" }).waitFor();
    await check(page, "02-check-mail", width);
    await page.goto(linkIn(await smtp.waitForMail(email, /Confirm your email/)));
    await page.getByRole("button", { name: "Confirm my email address" }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await check(page, "03-keys", width);

    // The reference from the portal, and the way back to the portal from it.
    await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "API docs" }).click();
    await page.waitForURL(`${api.url}/docs`);
    await page.getByRole("link", { name: "developer portal", exact: true }).first().waitFor();
    await check(page, "04-docs", width);
    await page.getByRole("link", { name: "developer portal", exact: true }).first().click();
    await page.waitForURL((url) => url.href.startsWith(portal.url));
    await page.goto(`${portal.url}/keys`);
    await page.getByRole("heading", { name: "API keys" }).waitFor();

    // A key.
    await page.getByLabel("Name").fill("storefront");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("heading", { name: "Your new key" }).waitFor();
    const key = await page.locator("#new-key").inputValue();
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    await check(page, "05-new-key", width);
    await api.handler.reload();

    // The console: the active sales, sent by the browser straight to the API with the key in X-Api-Key.
    await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "Console" }).click();
    await page.getByRole("heading", { name: "API console" }).waitFor();
    const operation = page.getByLabel("Operation");
    const active = (await operation.locator("option").allTextContents()).find((t) =>
      t.includes("/v1/sales/active.json"),
    );
    await operation.selectOption({ label: active! });
    await page.getByRole("button", { name: "Show its parameters" }).click();
    await page.getByRole("heading", { name: "GET /v1/sales/active.json" }).waitFor();
    await page.getByLabel("API key", { exact: true }).fill(key);
    await page.getByRole("radio", { name: /X-Api-Key/ }).check();
    await page.getByRole("button", { name: "Send request" }).click();
    const status = page.getByRole("status");
    await status.filter({ hasText: / bytes of |No answer could be read/ }).waitFor();
    expect(await status.textContent()).toMatch(/^200 OK/);
    await check(page, "06-console-answer", width);

    // The API with the key in each header and in the query, from a program.
    const answers = await Promise.all(
      [
        ["/v1/products/categories.json", { "X-Api-Key": key }],
        ["/v1/products?q=boot", { Authorization: `Bearer ${key}` }],
        [`/v1/sales/upcoming.json?apikey=${key}`, {}],
      ].map(async ([path, headers]) => {
        const res = await api.get(path as string, { headers: headers as Record<string, string> });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(answers).toEqual([200, 200, 200]);

    // Those requests on the usage page, under the key's label and each endpoint.
    await usage.flush();
    await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "Usage" }).click();
    await page.getByRole("heading", { name: "Usage" }).first().waitFor();
    const byKey = page.getByRole("table", { name: /by key/i });
    expect(await byKey.getByRole("row", { name: /storefront/ }).count()).toBe(1);
    const byEndpoint = page.getByRole("table", { name: /by endpoint/i });
    const endpoints = (await byEndpoint.getByRole("row").allTextContents()).join("\n");
    for (const route of ["sale_list", "categories", "search"]) expect(endpoints).toContain(route);
    await check(page, "07-usage", width);
    await context.close();
  });

  it("found no page with a problem, and nothing asked of another host", () => {
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  });
});
