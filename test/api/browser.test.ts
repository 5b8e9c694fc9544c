// The reference page and the API in a real browser (Debian's Chromium, driven by playwright-core): every operation's
// section renders, nothing is requested from another host, axe-core finds no violation at a desktop's width or a
// phone's (390 px), and a page on another origin reads the API by CORS and JSONP.
import { createServer } from "node:http";
import type { Server } from "node:http";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { startTestApi, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { checkWidths, WIDTHS } from "../portal/page-check.ts";

// Installed by npm test's first step; if it is missing, the file fails naming it.
const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "flash-sale-docs-screenshots");

describe("in Chromium", () => {
  let api: TestApi;
  let browser: Browser;
  let other: Server;
  let otherUrl: string;
  beforeAll(async () => {
    api = await startTestApi();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    other = createServer((_, res) => res.writeHead(200, { "content-type": "text/html" }).end(otherPage(api)));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    otherUrl = `http://localhost:${(other.address() as { port: number }).port}/`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => other?.close(resolve));
    await api?.close();
  });

  it("renders every operation of /docs, asking no other host for anything", async () => {
    const doc = (await (await api.get("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { operationId: string; summary: string; tags: string[] }>>;
    };
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${api.url}/docs`);
    await page.getByRole("heading", { name: "Getting started" }).first().waitFor();
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
    // React hydrates the server-rendered page after the bundle runs: until then a click is a plain link.
    // (Expressions as text: they run in the page, and this project's types have no DOM.)
    await page.waitForFunction(
      `Object.keys(document.getElementById("redoc") ?? {}).some((k) => k.startsWith("__reactContainer"))`,
    );
    for (const op of operations) await open(page, op.tags[0]!, op.summary);
    const shot = join(await tempDir("fsa-browser-"), "docs.png");
    await page.screenshot({ path: shot });
    console.log(`${operations.length} operations rendered; screenshot: ${shot}`);
    const elsewhere = requested.filter((u) => /^https?:/.test(u) && new URL(u).origin !== api.url);
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
    expect(operations).toHaveLength(15);
  });

  it("/docs: axe-core finds no violation at a desktop's width or a phone's, nothing is wider than the screen; a skip link", async () => {
    const context = await browser.newContext({ viewport: WIDTHS.phone, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await page.goto(`${api.url}/docs`);
    await page.getByRole("heading", { name: "Your API key" }).first().waitFor();
    await page.waitForFunction(
      `Object.keys(document.getElementById("redoc") ?? {}).some((k) => k.startsWith("__reactContainer"))`,
    );
    await mkdir(SHOTS, { recursive: true });
    const problems = await checkWidths(page, "docs", SHOTS);
    console.log(`/docs screenshots: ${SHOTS}/docs-desktop.png, ${SHOTS}/docs-390.png`);
    // The first Tab reaches the skip link, which takes the focus to the reference itself.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(`document.activeElement.textContent`)).toBe("Skip to the reference");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(`document.activeElement.tagName`)).toBe("MAIN");
    expect(await page.title()).toBe("Flash-sale API reference");
    expect(await page.getByRole("heading", { level: 1 }).first().textContent()).toBe("Flash-sale API (v1)");
    await context.close();
    expect(problems).toEqual([]);
  });

  it("a page on another origin reads the API with fetch (CORS) and with a JSONP script", async () => {
    const page = await browser.newPage();
    await page.goto(otherUrl);
    const results = await page.waitForFunction(
      `(({ results: r }) => (r.fetch && r.jsonp && r.jsonpError ? r : null))(window)`,
    );
    expect(await results.jsonValue()).toEqual({
      fetch: ["boots", "coats"],
      jsonp: ["boots", "coats"],
      jsonpError: 401,
    });
  });
});

/** Opens an operation through the sidebar, as a reader does (its tag's group first), until its heading shows. */
async function open(page: Page, tag: string, summary: string): Promise<void> {
  // The sidebar's entry is the first element with the summary; the operation's title, once rendered, the second.
  const heading = page.getByText(summary, { exact: true }).nth(1);
  for (let attempt = 1; ; attempt++) {
    const entry = page.getByText(summary, { exact: true }).first();
    if (!(await entry.isVisible())) await page.getByText(tag, { exact: true }).first().click();
    await entry.click();
    try {
      await heading.waitFor({ timeout: 15_000 });
      return;
    } catch (err) {
      if (attempt === 2) throw err; // a click during hydration can be lost: the page is not ready yet
    }
  }
}

/** A page of another origin: the active sales by fetch and by JSONP, and a JSONP error (no key) with status 200. */
function otherPage(api: TestApi): string {
  const list = `${api.url}/v1/sales/active.json?apikey=${api.key}`;
  return `<!DOCTYPE html><html><body><script>
window.results = {};
fetch(${JSON.stringify(list)}).then((r) => r.json()).then((b) => (results.fetch = b.sales.map((s) => s.sale_key)), (e) => (results.fetch = String(e)));
function gotSales(body) { results.jsonp = body.sales.map((s) => s.sale_key); }
function gotError(problem) { results.jsonpError = problem.status; }
</script>
<script src="${list}&callback=gotSales"></script>
<script src="${api.url}/v1/sales/active.json?callback=gotError&suppress_response_codes=1"></script>
</body></html>`;
}
