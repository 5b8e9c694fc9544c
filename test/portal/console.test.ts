// The console (GET /console) in Chromium against a real API server with a real key: a search sent with the key in the
// query and in each header (200, its headers and its JSON), a wrong key (the 401's problem), a signed-in partner's key
// names and a product by its path parameter at a phone's width, and without script the prepared request sent to the
// API. Every request the pages make is recorded: no key ever reaches the portal, nothing goes to a third host. axe-core
// finds no violation at all (any impact) at 1280 and 390 px; the screenshots are kept to be looked at.
import { readFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { createPartnerKey } from "../../src/portal/partner-keys.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount, updateAccount } from "../../src/portal/store/accounts.ts";
import { createReloader } from "../../src/serve/http/reloader.ts";
import { startTestApi } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "flash-sale-console-screenshots");
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 900 } };
const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
/** Well formed, known to no one. */
const WRONG_KEY = "Zz".repeat(16);

interface Recorded {
  url: string;
  headers: Record<string, string>;
  body: string;
}

describe("the console in Chromium", () => {
  let smtp: SmtpServer;
  let api: TestApi;
  let portal: TestPortal;
  let browser: Browser;
  const problems: string[] = [];
  /** Every request of every page, by where it went. */
  const toPortal: Recorded[] = [];
  const toApi: Recorded[] = [];
  const elsewhere: string[] = [];
  /** Every key the pages were given. */
  const keys = [WRONG_KEY];

  /** A browser context whose requests are recorded and whose CSP reports and script errors are problems. */
  async function open(options: BrowserContextOptions): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext(options);
    context.on("request", (r) => {
      const record = async () => ({ url: r.url(), headers: await r.allHeaders(), body: r.postData() ?? "" });
      if (r.url().startsWith(portal.url)) void record().then((x) => toPortal.push(x));
      else if (r.url().startsWith(api.url)) void record().then((x) => toApi.push(x));
      else elsewhere.push(r.url());
    });
    const page = await context.newPage();
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`script error: ${e.message}`));
    return { context, page };
  }

  /** axe-core's violations of any impact, a page wider than the screen; the screenshot kept as `<name>.png`. */
  async function scan(page: Page, name: string): Promise<void> {
    await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate<{ id: string; impact: string; nodes: { target: string[] }[] }[]>(
      `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)`,
    );
    for (const v of violations)
      problems.push(`${name}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    const overflow = await page.evaluate<number>(`document.documentElement.scrollWidth - screen.width`);
    if (overflow > 0) problems.push(`${name}: ${overflow} px wider than the screen`);
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  /** Picks `operation` (its label's start) on the console and waits for its form. */
  async function choose(page: Page, operation: string, path: string): Promise<void> {
    await page.getByLabel("Operation").selectOption({ label: operation });
    await page.getByRole("button", { name: "Show its parameters" }).click();
    await page.getByRole("heading", { name: `GET ${path}` }).waitFor();
  }

  /** Sends the form with `key` the `mode` way; the status line once the answer is read. */
  async function send(page: Page, key: string, mode: RegExp): Promise<string> {
    keys.push(key);
    await page.getByLabel("API key", { exact: true }).fill(key);
    await page.getByRole("radio", { name: mode }).check();
    await page.getByRole("button", { name: "Send request" }).click();
    const status = page.getByRole("status");
    await status.filter({ hasText: / bytes of |No answer could be read/ }).waitFor();
    return (await status.textContent()) ?? "";
  }

  const bodyOf = async (page: Page) => JSON.parse((await page.locator("#console-body").textContent()) ?? "") as unknown;
  const headerOf = (page: Page, name: string) =>
    page
      .getByRole("row", { name: new RegExp(`^${name} `, "i") })
      .getByRole("cell")
      .textContent();

  beforeAll(async () => {
    await rm(SHOTS, { recursive: true, force: true });
    await mkdir(SHOTS, { recursive: true });
    [smtp, api] = await Promise.all([startSmtpServer(), startTestApi()]);
    portal = await startTestPortal(smtp, { keysFile: api.keysFile, apiUrl: api.url });
    portal.clock.now = api.clock.now * 1000;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await api?.close();
    await smtp?.stop();
  });

  it("sends a search with the key in the query: 200, its headers and its JSON; a wrong key gets the 401 problem", async () => {
    const { context, page } = await open(DESKTOP);
    await page.goto(`${portal.url}/console`);
    await page.getByRole("heading", { name: "API console" }).waitFor();
    await scan(page, "01-console-desktop");
    await choose(page, "Search the products on sale now: GET /v1/products", "/v1/products");
    await page.getByLabel("q (required)").fill("boot");
    await page.getByRole("checkbox", { name: "women" }).check();
    await page.getByLabel("rows").fill("5");

    expect(await send(page, api.key, /apikey query parameter/)).toMatch(
      /^200 OK in \d+ ms, \d+ bytes of application\/json/,
    );
    expect(await headerOf(page, "content-type")).toBe("application/json; charset=utf-8");
    expect(await headerOf(page, "cache-control")).toMatch(/^public, max-age=\d+$/);
    const found = (await bodyOf(page)) as { total_found: number; products: { name: string }[] };
    expect(found.total_found).toBe(2);
    expect(found.products.map((p) => p.name).sort()).toEqual(["Leather Ankle Boot 1", "Suede Chelsea Boot"]);
    expect(await page.locator("#console-request").textContent()).toBe(
      `GET ${api.url}/v1/products?q=boot&store=women&rows=5&apikey=<your key>`,
    );
    await scan(page, "02-console-desktop-200");

    expect(await send(page, WRONG_KEY, /apikey query parameter/)).toMatch(
      /^401 Unauthorized .* application\/problem\+json/,
    );
    expect(await bodyOf(page)).toMatchObject({ status: 401, code: "api_key_invalid" });
    await scan(page, "03-console-desktop-401");
    await context.close();
  });

  it("sends the key in X-Api-Key and in Authorization: Bearer (the API's CORS preflight allows them)", async () => {
    const { context, page } = await open(DESKTOP);
    await page.goto(`${portal.url}/console?op=searchProducts`);
    await page.getByLabel("q (required)").fill("wool");
    for (const [mode, header, value] of [
      [/X-Api-Key/, "x-api-key", api.key],
      [/Authorization: Bearer/, "authorization", `Bearer ${api.key}`],
    ] as const) {
      expect(await send(page, api.key, mode)).toMatch(/^200 OK /);
      expect(((await bodyOf(page)) as { total_found: number }).total_found).toBe(1);
      // The API exposes its headers to scripts (Access-Control-Expose-Headers): the console shows them.
      expect(await headerOf(page, "etag")).toMatch(/^(W\/)?"/);
      expect(await headerOf(page, "ratelimit-remaining")).toMatch(/^\d+$/);
      const sent = toApi.filter((r) => r.url === `${api.url}/v1/products?q=wool`).at(-1);
      expect(sent?.headers[header]).toBe(value);
    }
    await context.close();
  });

  it("at a phone's width: a signed-in partner picks one of their keys' names and gets a product by its path parameter", async () => {
    // The API reads its keys file again once the key is in it (a reloader notes the file as it is when made).
    const reloader = createReloader(api.handler, api.dataDir, api.keysFile, { watchKeys: false });
    const made = await createAccount(
      portal.db,
      { email: "console@example.test", partner: "Console Shop", password: await hashPassword("a console password") },
      portal.clock.now,
    );
    await updateAccount(portal.db, made!.id, { verified: portal.clock.now });
    const { key } = await createPartnerKey(
      portal.db,
      api.keysFile,
      { id: made!.id, rate: null, burst: null },
      "my shop",
      10,
      portal.clock.now,
    );
    await reloader.check();
    reloader.stop();

    const { context, page } = await open(PHONE);
    await page.goto(`${portal.url}/sign-in`);
    await page.getByLabel("Email").fill("console@example.test");
    await page.getByLabel("Password").fill("a console password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.goto(`${portal.url}/console`);
    await choose(
      page,
      "One product: GET /v1/products/{product_id}/detail.json",
      "/v1/products/{product_id}/detail.json",
    );
    const name = `my shop (${key.slice(0, 4)}…${key.slice(-4)})`;
    await page.getByLabel("Which of your keys").selectOption({ label: name });
    await page.getByLabel("product_id (required)").fill("2");
    await scan(page, "04-console-phone-product");

    expect(await send(page, key, /apikey query parameter/)).toMatch(/^200 OK .*\.$/);
    expect(await bodyOf(page)).toMatchObject({ id: 2, name: "Suede Chelsea Boot" });
    await scan(page, "05-console-phone-200");
    // Another key than the one picked: sent anyway (the API decides), and the partner is told.
    expect(await send(page, WRONG_KEY, /apikey query parameter/)).toMatch(
      new RegExp(`^401 .* The key you pasted is not ${name.replace(/[()]/g, "\\$&")}\\.$`),
    );
    await scan(page, "06-console-phone-401");
    await context.close();
  });

  it("without script, prepares the request and sends it to the API with the key as apikey", async () => {
    const { context, page } = await open({ ...PHONE, javaScriptEnabled: false });
    await page.goto(`${portal.url}/console?op=searchProducts`);
    await page.getByText("Sending from this page needs JavaScript").waitFor();
    await page.getByLabel("q (required)").fill("chelsea");
    await page.getByRole("button", { name: "Prepare the request" }).click();
    await page.getByRole("heading", { name: "The prepared request" }).waitFor();
    expect(await page.locator("#prepared-url").textContent()).toBe(`GET ${api.url}/v1/products?q=chelsea`);
    keys.push(api.key);
    await page.getByLabel("API key, sent as apikey").fill(api.key);
    await page.getByRole("button", { name: "Send it to the API" }).click();
    await page.waitForURL(`${api.url}/v1/products?q=chelsea&apikey=${api.key}`);
    expect(JSON.parse((await page.locator("body").textContent()) ?? "")).toMatchObject({ total_found: 1 });
    await context.close();

    // The same prepared page, scanned with script on (axe runs as a script), a path parameter filled in.
    const scripted = await open(PHONE);
    await scripted.page.goto(`${portal.url}/console?op=getSale&prepare=1&store=women&sale_key=boots`);
    expect(await scripted.page.locator("#prepared-url").textContent()).toBe(
      `GET ${api.url}/v1/sales/women/boots/detail.json`,
    );
    await scan(scripted.page, "07-console-phone-prepared");
    await scripted.context.close();
  });

  it("lets the console's page alone reach the API (CSP), never sends a key to the portal, asks no other host", async () => {
    const cspOf = async (path: string) => (await fetch(portal.url + path)).headers.get("content-security-policy")!;
    const directive = (csp: string, name: string) => csp.split("; ").find((d) => d.startsWith(`${name} `));
    const consoleCsp = await cspOf("/console");
    expect(directive(consoleCsp, "connect-src")).toBe(`connect-src 'self' ${api.url}`);
    expect(directive(consoleCsp, "form-action")).toBe(`form-action 'self' ${api.url}`);
    expect(directive(await cspOf("/sign-in"), "connect-src")).toBe("connect-src 'self' 'self'");

    expect(toPortal.length).toBeGreaterThan(10);
    expect(toApi.length).toBeGreaterThan(5);
    for (const r of toPortal)
      for (const key of keys) expect(JSON.stringify(r), `${r.url} carries a key`).not.toContain(key);
    expect(elsewhere).toEqual([]);
    console.log(`console screenshots: ${SHOTS}`);
    expect(problems).toEqual([]);
  });
});
