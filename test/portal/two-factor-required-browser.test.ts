// Issue 36's required two-factor sign-in in a real browser (Debian's Chromium, playwright-core), on SQLite: an owner
// without two-factor is refused the requirement on the settings page, sets TOTP up (the code computed here with
// otpauth from the secret the page shows), and turns the requirement on; their developer, who has no two-factor, signs
// in and lands on the two-factor page, which says the organisation requires it, is brought back there from the keys
// page, sets it up, and then reaches the keys. Every page is checked with axe-core (no violation) at a desktop's width
// and a phone's (390 px), must fit the screen and break no CSP rule; a screenshot of each is kept to be looked at.
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
import { createAccount } from "../../src/portal/store/accounts.ts";
import { addMember } from "../../src/portal/store/organisations.ts";
import { checkWidths, openPhone, signInWithPassword } from "./page-check.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "shots-require");
const PASSWORD = "correct horse battery";
const REQUIRED = "Acme Partners requires two-factor sign-in of every member.";

describe("required two-factor sign-in in Chromium", () => {
  let smtp: SmtpServer;
  let portal: TestPortal;
  let browser: Browser;
  const problems: string[] = [];

  const check = async (page: Page, name: string) => {
    problems.push(...(await checkWidths(page, name, SHOTS)));
  };
  /** A phone's browser of its own, whose script errors and CSP refusals are problems. */
  const phone = async () => (await openPhone(browser, problems)).page;
  const signIn = (page: Page, email: string) => signInWithPassword(page, portal.url, email, PASSWORD);
  /** From the two-factor page: the password, the setup page (checked as `shot` when given), the code. */
  const setUp = async (page: Page, shot?: string) => {
    await page.locator('form[action="/account/two-factor/setup"]').getByLabel("Current password").fill(PASSWORD);
    await page.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    await page.getByRole("heading", { name: "Set up two-factor sign-in" }).waitFor();
    if (shot) await check(page, shot);
    const secret = (await page.locator("code.totp-secret").innerText()).replace(/\s/g, "");
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: portal.clock.now });
    await page.getByRole("textbox", { name: "Code" }).fill(code);
    await page.getByRole("button", { name: "Turn two-factor sign-in on" }).click();
    await page.getByRole("heading", { name: "Your recovery codes" }).waitFor();
  };

  beforeAll(async () => {
    await rm(SHOTS, { recursive: true, force: true });
    await mkdir(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    portal = await startTestPortal(smtp, { secretKey: randomBytes(32) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await smtp?.stop();
  });

  it("has an owner require two-factor, and sends their developer to set it up before the keys", async () => {
    const now = portal.clock.now;
    const hash = await hashPassword(PASSWORD);
    const founder = await createAccount(
      portal.db,
      { email: "owner@example.test", partner: "Acme Partners", password: hash, verified: now },
      now,
    );
    const dev = await createAccount(
      portal.db,
      { email: "dev@example.test", partner: "Acme Partners", password: hash, verified: now },
      now,
      false,
    );
    await addMember(portal.db, founder!.id, dev!.id, "developer", now);

    // The owner: refused while they have no two-factor; sets it up; turns the requirement on.
    const owner = await phone();
    await signIn(owner, "owner@example.test");
    await owner.getByRole("link", { name: "Team" }).click();
    await owner.getByRole("link", { name: "Organisation settings" }).click();
    await owner.getByRole("heading", { name: "Organisation settings" }).waitFor();
    await check(owner, "01-settings");
    await owner.getByLabel("Require two-factor sign-in for every member").check();
    await owner.getByRole("button", { name: "Save the two-factor setting" }).click();
    await owner.getByText("You cannot require two-factor sign-in of every member").waitFor();
    await check(owner, "02-settings-refused");
    await owner.getByRole("link", { name: "set it up" }).click();
    await setUp(owner);
    await owner.goto(`${portal.url}/team/settings`);
    await owner.getByLabel("Require two-factor sign-in for every member").check();
    await owner.getByRole("button", { name: "Save the two-factor setting" }).click();
    await owner.getByText("Two-factor sign-in is now required of every member.").waitFor();
    await check(owner, "03-settings-required");

    // The developer: lands on the two-factor page, which says why; the keys bring them back; set up, the keys open.
    const developer = await phone();
    await signIn(developer, "dev@example.test");
    await developer.getByText(REQUIRED).waitFor();
    expect(new URL(developer.url()).pathname).toBe("/account/two-factor");
    await check(developer, "04-required-two-factor-page");
    await developer.goto(`${portal.url}/keys`);
    expect(new URL(developer.url()).pathname).toBe("/account/two-factor");
    await setUp(developer, "05-required-setup-page");
    expect(await developer.getByText(REQUIRED).count()).toBe(0);
    await developer.getByRole("link", { name: "API keys" }).click();
    await developer.getByRole("heading", { name: "API keys" }).waitFor();
    expect(new URL(developer.url()).pathname).toBe("/keys");
    await check(developer, "06-developer-keys");

    expect(problems).toEqual([]);
  });
});
