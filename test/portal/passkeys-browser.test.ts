// Passkeys in a real browser (Debian's Chromium, driven by playwright-core) with a virtual authenticator of the
// DevTools protocol's WebAuthn domain (internal, resident keys, user verified), the portal on http://localhost:<port>:
// a partner adds a passkey from the two-factor page (the password again) and keeps the recovery codes it brings,
// signs out, signs in with the passkey alone, then with the password and the passkey as the second step. Without
// JavaScript the pages say passkeys need it, and the password, the code step and a recovery code still sign in. Every
// page with script is checked with axe-core (no violation) at 1280 and 390 px (axe is a script: without, screenshots
// only); none asks another host for anything or breaks a CSP rule. The screenshots are kept in /tmp/shots-passkeys.
import { mkdir, rm } from "node:fs/promises";
import { chromium } from "playwright-core";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount, updateAccount } from "../../src/portal/store/accounts.ts";
import { checkWidths, openPhone, WIDTHS } from "./page-check.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = "/tmp/shots-passkeys";
const EMAIL = "passkeys@example.test";
const PASSWORD = "a long and careful password";

describe("passkeys in Chromium", () => {
  let smtp: SmtpServer;
  let portal: TestPortal;
  let browser: Browser;
  let codes: string[] = [];
  const problems: string[] = [];
  const elsewhere: string[] = [];
  const check = async (page: Page, name: string) => {
    problems.push(...(await checkWidths(page, name, SHOTS)));
  };
  /** Without script axe cannot run (it is a script): the page's screenshots only, at both widths. */
  const shoot = async (page: Page, name: string) => {
    for (const [width, size] of [
      ["desktop", WIDTHS.desktop],
      ["390", WIDTHS.phone],
    ] as const) {
      await page.setViewportSize(size);
      await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
    }
  };

  beforeAll(async () => {
    await rm(SHOTS, { recursive: true, force: true });
    await mkdir(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    portal = await startTestPortal(smtp, { host: "localhost" }); // WebAuthn's RP ID is a host name, not an address
    const made = await createAccount(
      portal.db,
      { email: EMAIL, partner: "Passkey Ltd", password: await hashPassword(PASSWORD) },
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
  const phone = (options: BrowserContextOptions = {}) => openPhone(browser, problems, elsewhere, options);
  const signInWithPassword = async (page: Page) => {
    await page.goto(`${portal.url}/sign-in`);
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
  };

  it("adds a passkey, then signs in with it alone and as the second step", async () => {
    const { context, page } = await phone();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });

    await signInWithPassword(page);
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.goto(`${portal.url}/account/two-factor`);
    await check(page, "01-two-factor-off");
    await page.getByLabel("Passkey name").fill("This phone");
    await page.locator('form[action="/account/two-factor/passkeys/new"]').getByLabel("Current password").fill(PASSWORD);
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await page.getByRole("heading", { name: "Add a passkey" }).waitFor();
    await check(page, "02-create-passkey");
    await page.getByRole("button", { name: "Create the passkey" }).click();
    await page.getByRole("heading", { name: "Your recovery codes" }).waitFor();
    codes = await page.locator("ol.recovery-codes code").allInnerTexts();
    expect(codes).toHaveLength(10);
    await check(page, "03-recovery-codes");
    await page.getByRole("link", { name: /back to two-factor sign-in/ }).click();
    await page.getByRole("heading", { name: "This phone" }).waitFor();
    await page.getByText("Rename or remove “This phone”").click();
    await check(page, "04-two-factor-passkey");
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    await page.getByRole("button", { name: "Sign out" }).click();

    // The passkey alone: no email, no password.
    await page.getByRole("button", { name: "Sign in with a passkey" }).waitFor();
    await check(page, "05-sign-in");
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();

    // The password, then the passkey as the second step.
    await signInWithPassword(page);
    await page.getByRole("heading", { name: "Enter your code" }).waitFor();
    await check(page, "06-code-step");
    await page.getByRole("button", { name: "Use a passkey" }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.goto(`${portal.url}/account/two-factor`);
    expect(await page.locator("dd").filter({ hasText: "Never" }).count()).toBe(0); // its last use is shown
    await context.close();

    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 120_000);

  it("says passkeys need JavaScript without it, and signs in with the password and a recovery code", async () => {
    const { context, page } = await phone({ javaScriptEnabled: false });
    await page.goto(`${portal.url}/sign-in`);
    await page.getByText("Signing in with a passkey needs JavaScript").waitFor();
    expect(await page.getByRole("button", { name: "Sign in with a passkey" }).count()).toBe(0);
    await shoot(page, "07-sign-in-without-javascript");
    await signInWithPassword(page);
    await page.getByRole("heading", { name: "Enter your code" }).waitFor();
    await page.getByText("Using a passkey needs JavaScript").waitFor();
    await shoot(page, "08-code-step-without-javascript");
    await page.getByRole("textbox", { name: "Code" }).fill(codes[0]!);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.goto(`${portal.url}/account/two-factor`);
    await page.getByLabel("Passkey name").fill("Another");
    await page.locator('form[action="/account/two-factor/passkeys/new"]').getByLabel("Current password").fill(PASSWORD);
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await page.getByText("Making a passkey needs JavaScript").waitFor();
    await shoot(page, "09-create-without-javascript");
    await context.close();

    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 120_000);
});
