// The operator's approval form in a real browser (Debian's Chromium, driven by playwright-core): an account waiting
// for approval shows the form with its optional note to the partner, which passes axe-core and fits the screen at a
// desktop's and a phone's width; the note typed there reaches the partner in the approval's mail.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount, updateAccount } from "../../src/portal/store/accounts.ts";
import { checkWidths } from "./page-check.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "flash-sale-portal-approve-screenshots");
const PASSWORD = "operator password 123";

describe("the approval form in Chromium", () => {
  let smtp: SmtpServer;
  let portal: TestPortal;
  let browser: Browser;
  let pendingId = "";

  beforeAll(async () => {
    smtp = await startSmtpServer();
    portal = await startTestPortal(smtp, { approval: "manual" });
    const password = await hashPassword(PASSWORD);
    const operator = await createAccount(
      portal.db,
      { email: "op@example.test", partner: "Operator", password },
      portal.clock.now,
    );
    await updateAccount(portal.db, operator!.id, { role: "admin", verified: portal.clock.now });
    const pending = await createAccount(
      portal.db,
      { email: "waiting@example.test", partner: "Waiting Ltd", password, status: "pending" },
      portal.clock.now,
    );
    await updateAccount(portal.db, pending!.id, { verified: portal.clock.now });
    pendingId = pending!.id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await smtp?.stop();
  });

  it("approves with a note that passes axe at both widths and is mailed to the partner", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await page.goto(`${portal.url}/sign-in`);
    await page.getByLabel("Email").fill("op@example.test");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.goto(`${portal.url}/admin/accounts/${pendingId}`);
    expect(await checkWidths(page, "approve-form", SHOTS)).toEqual([]);
    await page.getByLabel("Note to the partner (optional)").fill("Welcome: invoices go to billing@example.test");
    await page.getByRole("button", { name: "Approve the account" }).click();
    await page.getByText("The account is approved.").waitFor();
    await portal.outbox.flush();
    const mail = await smtp.waitForMail("waiting@example.test", /is approved/);
    expect(mail.body).toContain("The operator's note: Welcome: invoices go to billing@example.test");
    await context.close();
  });
});
