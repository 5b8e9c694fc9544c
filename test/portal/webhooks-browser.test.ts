// Issue 38's webhooks pages in a real browser (Debian's Chromium, playwright-core), on SQLite: an owner adds an
// endpoint (a real receiver on 127.0.0.1, WEBHOOKS_ALLOW=loopback) from the form, copies the secret shown once on the
// endpoint's page the form redirects to (a reload shows it no more, and adds nothing), rotates it (the same, once),
// sends a test event, and sees the attempt in the delivery log; a failing delivery is retried from its button. Every page is
// checked with axe-core (no violation of any impact) at a desktop's width and a phone's; screenshots in
// /tmp/shots-webhooks/.
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount } from "../../src/portal/store/accounts.ts";
import { checkWidths, openPhone, signInWithPassword } from "./page-check.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";
import { heldTimers, startReceiver } from "./webhook-receiver.ts";
import type { Receiver } from "./webhook-receiver.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = "/tmp/shots-webhooks";
const PASSWORD = "correct horse battery";
const main = (page: Page) => page.locator("main").innerText();

/**
 * Reloads the page a form redirected to (`?done=<done>`) once that page has loaded: a reload issued while the form's
 * POST and redirect are still under way fails ("Not attached to an active page", once in a full run).
 */
async function reloadAfter(page: Page, done: string): Promise<void> {
  await page.waitForURL((url) => url.searchParams.get("done") === done, { waitUntil: "load" });
  await page.waitForLoadState("load"); // the same URL again (a second secret): the new document's own load
  await page.reload();
}

describe("webhooks in Chromium", () => {
  let smtp: SmtpServer;
  let portal: TestPortal;
  let browser: Browser;
  let receiver: Receiver;
  const problems: string[] = [];
  const check = async (page: Page, name: string) => {
    problems.push(...(await checkWidths(page, name, SHOTS)));
  };

  beforeAll(async () => {
    await rm(SHOTS, { recursive: true, force: true });
    await mkdir(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    receiver = await startReceiver();
    portal = await startTestPortal(smtp, {
      secretKey: randomBytes(32),
      webhookSettings: { allow: ["127.0.0.0/8"], scheduler: heldTimers().scheduler },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await receiver?.close();
    await smtp?.stop();
  });

  it("adds an endpoint, shows its secret once, rotates it, sends a test event and shows the attempt in the log", async () => {
    const now = portal.clock.now;
    const email = "hooks@example.test";
    await createAccount(
      portal.db,
      { email, partner: "Hook Partners", password: await hashPassword(PASSWORD), verified: now },
      now,
      true,
    );
    const { page } = await openPhone(browser, problems);
    await signInWithPassword(page, portal.url, email, PASSWORD);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await check(page, "1-endpoints-empty");

    await page.getByLabel("URL").fill("https://10.1.2.3/hook");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    expect(await main(page)).toContain("Refused: 10.1.2.3 is not a public address");
    await check(page, "2-refused");

    await page.getByLabel("URL").fill(`${receiver.url}/hook`);
    await page.getByLabel("sale.updated").uncheck();
    await page.getByLabel("Stores").fill("women, home");
    await page.getByLabel("Affiliate ID (affid)").fill("partner7");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = await page.getByLabel(/The signing secret/).inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(await main(page)).toContain("The endpoint is added.");
    expect(new URL(page.url()).pathname).toMatch(/^\/webhooks\/[a-z0-9]{16}$/);
    await check(page, "3-secret-shown");
    // The page the form redirected to, reloaded: a GET, which adds nothing and shows the secret no more.
    await reloadAfter(page, "secret");
    expect(await page.getByLabel(/The signing secret/).count()).toBe(0);
    expect(await main(page)).toContain("The signing secret was shown once");
    await check(page, "4-secret-reloaded");

    await page.getByRole("button", { name: "Rotate the secret" }).click();
    const rotated = await page.getByLabel(/The signing secret/).inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect(await main(page)).toContain("The secret is replaced");
    await reloadAfter(page, "secret");
    expect(await page.getByLabel(/The signing secret/).count()).toBe(0);

    receiver.answer = () => 503;
    await page.getByRole("button", { name: "Send a test event" }).click();
    await portal.webhooks!.deliverer.flush();
    await reloadAfter(page, "test");
    expect(await main(page)).toMatch(/none|503/);
    expect(await main(page)).toContain("answer 503");
    await check(page, "5-log-failed");

    receiver.answer = () => 200;
    await page.getByRole("button", { name: /^Retry now/ }).click();
    expect(await main(page)).toContain("The delivery is sent again now.");
    await portal.webhooks!.deliverer.flush();
    await reloadAfter(page, "retry");
    expect(await main(page)).toContain("answer 200");
    expect(await main(page)).toContain("delivered");
    await check(page, "6-log-delivered");
    expect(receiver.received).toHaveLength(2);

    await page.getByRole("link", { name: "Delete" }).click();
    await check(page, "7-delete");
    await page.getByRole("button", { name: "Delete the endpoint" }).click();
    expect(await main(page)).toContain("was deleted");
    expect(await main(page)).toContain("No endpoints yet.");
    expect(problems).toEqual([]);
  }, 120_000);
});
