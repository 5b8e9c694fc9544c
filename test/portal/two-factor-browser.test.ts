// Two-factor sign-in in a real browser (Debian's Chromium, driven by playwright-core): a partner sets up TOTP from the
// account page (a wrong code refused, then the code computed here from the secret the page shows), keeps the recovery
// codes, signs out, and signs in again with the password and a TOTP code; going to the keys directly after the
// password lands on the code step; a wrong code is refused; later a recovery code signs in. Every page is checked with
// axe-core (no violation) at a desktop's width and a phone's (390 px), must fit the screen's width, asks no other host
// for anything and breaks no CSP rule; a screenshot of each is kept.
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount, updateAccount } from "../../src/portal/store/accounts.ts";
import { checkWidths, openPhone } from "./page-check.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "flash-sale-two-factor-screenshots");
const EMAIL = "two-factor@example.test";
const PASSWORD = "a long and careful password";

describe("two-factor sign-in in Chromium", () => {
  let smtp: SmtpServer;
  let portal: TestPortal;
  let browser: Browser;
  const problems: string[] = [];
  const elsewhere: string[] = [];
  const check = async (page: Page, name: string) => {
    problems.push(...(await checkWidths(page, name, SHOTS)));
  };
  const codeAt = (secret: string, at: number) =>
    new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });

  beforeAll(async () => {
    await rm(SHOTS, { recursive: true, force: true });
    await mkdir(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    portal = await startTestPortal(smtp, { secretKey: randomBytes(32) });
    const made = await createAccount(
      portal.db,
      { email: EMAIL, partner: "Two Factor Ltd", password: await hashPassword(PASSWORD) },
      portal.clock.now,
    );
    await updateAccount(portal.db, made!.id, { verified: portal.clock.now });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await smtp?.stop();
  });

  /** A phone's browser that records what its pages ask of other hosts and any CSP complaint or script error. */
  const phone = () => openPhone(browser, problems, elsewhere);
  const signInWithPassword = async (page: Page) => {
    await page.goto(`${portal.url}/sign-in`);
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "Enter your code" }).waitFor();
  };

  it("sets up TOTP, then signs in with the password and a code, and later with a recovery code", async () => {
    const { context, page } = await phone();
    await page.goto(`${portal.url}/sign-in`);
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByRole("link", { name: "set up or change two-factor sign-in" }).click();
    await page.getByRole("heading", { name: "Two-factor sign-in" }).waitFor();
    await check(page, "01-two-factor-off");
    await page.locator('form[action="/account/two-factor/setup"]').getByLabel("Current password").fill(PASSWORD);
    await page.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    await page.getByRole("heading", { name: "Set up two-factor sign-in" }).waitFor();
    expect(
      await page
        .getByRole("img", { name: /QR code/ })
        .locator("svg")
        .count(),
    ).toBe(1);
    await check(page, "02-setup");
    const secret = (await page.locator("code.totp-secret").innerText()).replace(/\s/g, "");
    await page.getByRole("textbox", { name: "Code" }).fill(codeAt(secret, portal.clock.now + 10 * 30_000));
    await page.getByRole("button", { name: "Turn two-factor sign-in on" }).click();
    await page.getByText("The code is wrong").first().waitFor();
    await check(page, "03-setup-wrong-code");
    await page.getByRole("textbox", { name: "Code" }).fill(codeAt(secret, portal.clock.now));
    await page.getByRole("button", { name: "Turn two-factor sign-in on" }).click();
    await page.getByRole("heading", { name: "Your recovery codes" }).waitFor();
    const codes = await page.locator("ol.recovery-codes code").allInnerTexts();
    expect(codes).toHaveLength(10);
    await check(page, "04-recovery-codes");
    await page.getByRole("link", { name: /back to two-factor sign-in/ }).click();
    await page.getByText("You have 10 unused recovery codes of 10.").waitFor();
    await check(page, "05-two-factor-on");
    await page.getByRole("button", { name: "Sign out" }).click();
    portal.clock.now += 30_000;

    // Password, then the code: the keys page asked for directly lands on the code step; a wrong code is refused.
    await signInWithPassword(page);
    await check(page, "06-code-step");
    await page.goto(`${portal.url}/keys`);
    expect(new URL(page.url()).pathname).toBe("/sign-in/code");
    await page.getByRole("textbox", { name: "Code" }).fill(codeAt(secret, portal.clock.now + 10 * 30_000));
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByText("The code is wrong, or was used already.").waitFor();
    await check(page, "07-code-wrong");
    await page.getByRole("textbox", { name: "Code" }).fill(codeAt(secret, portal.clock.now));
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/keys");
    await page.getByRole("button", { name: "Sign out" }).click();

    // The app lost: a recovery code.
    await signInWithPassword(page);
    await page.getByRole("textbox", { name: "Code" }).fill(codes[0]!);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.goto(`${portal.url}/account/two-factor`);
    await page.getByText("You have 9 unused recovery codes of 10.").waitFor();
    await context.close();

    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 120_000);
});
