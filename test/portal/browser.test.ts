// The portal in a real browser (Debian's Chromium, driven by playwright-core) at a phone's size: a partner signs up,
// follows the verification link from the SMTP server, creates a key, calls the real API with it, revokes it (401),
// and signs out. Every page is checked with axe-core (no serious or critical violations), must fit the screen's
// width, asks no other host for anything and breaks no CSP rule; a screenshot of each is kept.
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { startTestApi, withKey } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { linkIn, startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "flash-sale-portal-screenshots");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

describe("the portal in Chromium", () => {
  let smtp: SmtpServer;
  let api: TestApi;
  let portal: TestPortal;
  let browser: Browser;
  const problems: string[] = [];

  /** Checks the page as it is now (axe, width, CSP) and keeps a screenshot named `name`. */
  async function check(page: Page, name: string): Promise<void> {
    await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate<AxeViolation[]>(
      `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)`,
    );
    for (const v of violations.filter((v) => v.impact === "serious" || v.impact === "critical"))
      problems.push(
        `${name}: ${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
      );
    const overflow = await page.evaluate<number>(`document.documentElement.scrollWidth - window.innerWidth`);
    if (overflow > 0) problems.push(`${name}: ${overflow} px wider than the screen`);
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    api = await startTestApi();
    portal = await startTestPortal(smtp, { keysFile: api.keysFile, apiUrl: api.url });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await api?.close();
    await smtp?.stop();
  });

  it("signs up, verifies, makes a key that the API takes, revokes it (401), signs out", async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const elsewhere: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(portal.url)) elsewhere.push(r.url());
    });
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`script error: ${e.message}`));

    await page.goto(`${portal.url}/sign-up`);
    await check(page, "01-sign-up");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByText("Partner name is required").waitFor();
    await check(page, "02-sign-up-errors");
    await page.getByLabel("Partner name").fill("Browser Bargains");
    await page.getByLabel("Email").fill("browser@example.test");
    await page.getByLabel("Password").fill("a browser password");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("heading", { name: "Check your mail" }).waitFor();
    await check(page, "03-check-mail");

    const link = linkIn(await smtp.waitForMail("browser@example.test", /Confirm your email/));
    await page.goto(link);
    await check(page, "04-confirm-email");
    await page.getByRole("button", { name: "Confirm my email address" }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await check(page, "05-keys-empty");

    await page.getByLabel("Name").fill("my shop");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("heading", { name: "Your new key" }).waitFor();
    const key = await page.locator("#new-key").inputValue();
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(await page.getByRole("button", { name: "Copy the key" }).isVisible()).toBe(true); // the script ran
    await check(page, "06-key-created");
    await api.handler.reload();
    expect((await api.get(withKey({ ...api, key }, "/v1/sales/active.json"))).status).toBe(200);

    await page.getByRole("link", { name: "Back to your keys" }).click();
    await check(page, "07-keys-one");
    await page.getByRole("link", { name: "Rotate my shop" }).click();
    await check(page, "08-rotate");
    await page.getByRole("link", { name: "Cancel" }).click();
    await page.getByRole("link", { name: "Revoke my shop" }).click();
    await check(page, "09-revoke-confirm");
    await page.getByRole("button", { name: "Revoke the key" }).click();
    await page.getByText("The key was revoked.").waitFor();
    await check(page, "10-keys-revoked");
    await api.handler.reload();
    expect((await api.get(withKey({ ...api, key }, "/v1/sales/active.json"))).status).toBe(401);

    await page.getByRole("link", { name: "Account" }).click();
    await page.getByRole("heading", { name: "Activity" }).waitFor();
    await check(page, "11-account");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await check(page, "12-sign-in");
    await page.goto(`${portal.url}/keys`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();

    console.log(`portal screenshots: ${SHOTS}`);
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
    await context.close();
  });
});
