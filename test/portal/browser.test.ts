// The portal in a real browser (Debian's Chromium, driven by playwright-core) at a phone's size: a partner signs up,
// follows the verification link from the SMTP server, creates a key and calls two real API servers with it (A reads
// the portal's keys file; B, as on another machine, gets it through a real Redis with KEYS_SYNC's transport), rotates
// it (the old key works during the grace, 401 after, by the API's injected clocks), is suspended and reinstated by an
// operator in a second browser (401 then 200 at both), revokes the key (401 at both within 2 s), and signs out. On the
// way it opens /docs from the portal's navigation and comes back by the reference's link to the portal, has a
// verification link sent again, and finds the new key in the snippets of the key's page. Every page is checked with
// axe-core (no violation) at a desktop's width and a phone's (390 px), must fit the screen's width, asks no other host
// for anything and breaks no CSP rule; a screenshot of each is kept.
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { startKeySync } from "../../src/keys/key-sync.ts";
import type { KeySync } from "../../src/keys/key-sync.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount, updateAccount } from "../../src/portal/store/accounts.ts";
import { createReloader } from "../../src/serve/http/reloader.ts";
import type { Reloader } from "../../src/serve/http/reloader.ts";
import { freePort, startTestApi } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { startRedis, stopProcess } from "../helpers/processes.ts";
import type { Watched } from "../helpers/processes.ts";
import { checkWidths, openPhone } from "./page-check.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { linkIn, startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "flash-sale-portal-screenshots");

/** How soon both API servers must apply a change made in the portal, ms. */
const WITHIN_MS = 2_000;

describe("the portal in Chromium", () => {
  let smtp: SmtpServer;
  let redis: Watched;
  /** A reads the portal's keys file; B follows it through Redis, as a server on another machine. */
  let api: TestApi;
  let apiB: TestApi;
  let portal: TestPortal;
  let browser: Browser;
  const syncs: KeySync[] = [];
  const reloaders: Reloader[] = [];
  const problems: string[] = [];
  const elsewhere: string[] = [];

  /** The statuses A and B answer `key` with now. */
  const statuses = async (key: string) =>
    Promise.all(
      [api, apiB].map(async (a) => {
        const res = await a.get(`/v1/sales/active.json?apikey=${key}`);
        await res.arrayBuffer();
        return res.status;
      }),
    );
  /** Waits until both servers answer `key` with `status`, failing after WITHIN_MS. */
  async function bothAnswer(key: string, status: number): Promise<void> {
    const deadline = performance.now() + WITHIN_MS;
    for (;;) {
      const got = await statuses(key);
      if (got.every((s) => s === status)) return;
      if (performance.now() > deadline) throw new Error(`after ${WITHIN_MS} ms A and B answer ${got.join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Checks the page as it is now (axe, width, CSP) at both widths and keeps screenshots named `name-*`. */
  async function check(page: Page, name: string): Promise<void> {
    problems.push(...(await checkWidths(page, name, SHOTS)));
  }
  /** A phone's browser, which records what its pages ask of any host but their own (navigations aside). */
  const phone = () => openPhone(browser, problems, elsewhere);

  beforeAll(async () => {
    await rm(SHOTS, { recursive: true, force: true }); // only this run's pages
    await mkdir(SHOTS, { recursive: true });
    const [redisPort, portalPort] = [await freePort(), await freePort()];
    // A's reference page links to the portal, which is started on the port that link names.
    [smtp, redis, api, apiB] = await Promise.all([
      startSmtpServer(),
      startRedis(redisPort),
      startTestApi(undefined, { portalUrl: `http://127.0.0.1:${portalPort}` }),
      startTestApi(),
    ]);
    portal = await startTestPortal(smtp, { keysFile: api.keysFile, apiUrl: api.url, port: portalPort });
    portal.clock.now = api.clock.now * 1000; // one time for the portal and both servers
    apiB.clock.now = api.clock.now;
    for (const a of [api, apiB]) reloaders.push(createReloader(a.handler, a.dataDir, a.keysFile, { watchKeys: true }));
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    syncs.push(startKeySync({ redisUrl, keysFile: api.keysFile, role: "publish" }));
    syncs.push(
      startKeySync({ redisUrl, keysFile: apiB.keysFile, role: "follow", onApplied: () => void reloaders[1]!.check() }),
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    for (const r of reloaders) r.stop();
    await Promise.all(syncs.map((sync) => sync.close()));
    await portal?.close();
    await Promise.all([api?.close(), apiB?.close()]);
    await stopProcess(redis, "SIGKILL");
    await smtp?.stop();
  });

  /** An operator signs in in a new browser context, suspends `email`'s account and reinstates it, checking `key`. */
  async function operatorSuspendsAndReinstates(email: string, key: string): Promise<void> {
    const made = await createAccount(
      portal.db,
      { email: "operator@example.test", partner: "Operations", password: await hashPassword("an operator password") },
      portal.clock.now,
    );
    await updateAccount(portal.db, made!.id, { role: "admin", verified: portal.clock.now });
    const { context, page } = await phone();
    await page.goto(`${portal.url}/sign-in`);
    await page.getByLabel("Email").fill("operator@example.test");
    await page.getByLabel("Password").fill("an operator password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("link", { name: "Operator" }).click();
    await page.getByRole("heading", { name: "Accounts" }).waitFor();
    await check(page, "10-operator-accounts");
    await page.getByRole("link", { name: email }).click();
    await page.getByRole("heading", { name: email }).waitFor();
    await check(page, "11-operator-account");
    // Suspending asks for a reason and a confirmation: a click alone is refused, with the fields' messages.
    await page.getByRole("button", { name: "Suspend the account" }).click();
    await page.getByText("Give a reason: it is mailed to the partner").waitFor();
    await page.getByLabel("Reason", { exact: true }).fill("Keys shared in a public repository");
    await page.getByRole("checkbox", { name: /Suspend .*: its keys are refused/ }).check();
    await page.getByRole("button", { name: "Suspend the account" }).click();
    await page.getByText("The account is suspended").waitFor();
    await check(page, "12-operator-suspended");
    await bothAnswer(key, 401);
    await page.getByRole("button", { name: "Reinstate the account" }).click();
    await page.getByText("The account is reinstated").waitFor();
    await bothAnswer(key, 200);
    await page.getByRole("link", { name: "Operator keys" }).click();
    await check(page, "13a-operator-keys");
    await page.getByRole("link", { name: "Activity of every account" }).click();
    await page.getByText("operator.suspended").first().waitFor();
    await check(page, "13b-operator-activity");
    await context.close();
  }

  it("signs up, verifies, makes a key that two API servers take, rotates it (grace), is suspended and reinstated, revokes it (401 at both), signs out", async () => {
    const { context, page } = await phone();

    await page.goto(`${portal.url}/sign-up`);
    await check(page, "01-sign-up");
    // The first Tab reaches the skip link, which moves the focus to the page's content.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(`document.activeElement.textContent`)).toBe("Skip to the content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(`document.activeElement.id`)).toBe("main");
    // The focus ring on a navy button: 3 px of amber around a dark line.
    await page.getByRole("button", { name: "Sign up" }).focus();
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(`getComputedStyle(document.activeElement).outline`)).toBe("rgb(255, 191, 71) solid 3px");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByText("Partner name is required").first().waitFor();
    // The errors' summary, at the top, has the focus; each of its links takes the focus to its field.
    await page.waitForFunction(`document.activeElement?.id === "error-summary"`);
    expect(await page.getByRole("heading", { name: "There are 3 problems" }).isVisible()).toBe(true);
    await check(page, "02-sign-up-errors");
    await page.getByRole("link", { name: "Email: " }).click();
    expect(await page.evaluate(`document.activeElement.id`)).toBe("f-email");
    await page.getByLabel("Partner name").fill("Browser Bargains");
    await page.getByLabel("Email").fill("browser@example.test");
    await page.getByLabel("Password").fill("a browser password");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("heading", { name: "Check your mail" }).waitFor();
    await check(page, "03-check-mail");
    await smtp.waitForMail("browser@example.test", /Confirm your email/);
    // No mail yet, says the partner: the link is sent again, and a second mail arrives.
    await page.getByRole("button", { name: "Send the link again" }).click();
    await page.getByText("we sent it a new link").waitFor();
    await check(page, "03b-check-mail-again");
    const confirmMails = () =>
      smtp.mails().filter((m) => m.to === "browser@example.test" && /Confirm your email/.test(m.subject));
    expect(confirmMails()).toHaveLength(2);

    const link = linkIn(confirmMails()[1]!);
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
    // The snippets (curl, JavaScript, Python) carry the key, in the X-Api-Key header, each with its copy button.
    for (const [id, language] of [
      ["snippet-curl", "curl"],
      ["snippet-js", "JavaScript"],
      ["snippet-python", "Python"],
    ]) {
      const code = await page.locator(`#${id}`).textContent();
      expect(code).toContain(key);
      expect(code).toMatch(/X-Api-Key/);
      expect(code).toContain(api.url);
      expect(await page.getByRole("button", { name: `Copy the ${language} code` }).isVisible()).toBe(true);
    }
    await check(page, "06-key-created");
    await bothAnswer(key, 200);

    // Rotation with a grace of 1 hour: both keys work at A and B until it ends by the servers' clocks, then the new one.
    await page.getByRole("link", { name: "Back to your keys" }).click();
    await check(page, "07-keys-one");
    expect(await page.locator("#snippet-curl").textContent()).toContain("YOUR_API_KEY"); // a page that has no key

    // The reference, from the portal's navigation, and back by its link to the portal.
    await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "API docs" }).click();
    await page.waitForURL(`${api.url}/docs`);
    await page.getByRole("heading", { name: "Your API key" }).first().waitFor();
    await page.waitForFunction(
      `Object.keys(document.getElementById("redoc") ?? {}).some((k) => k.startsWith("__reactContainer"))`,
    );
    await check(page, "07b-docs");
    await page.getByRole("link", { name: "developer portal", exact: true }).first().click();
    await page.waitForURL(`${portal.url}/keys`);
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.getByRole("link", { name: "Rotate my shop" }).click();
    await check(page, "08-rotate");
    await page.getByLabel("1 hour").check();
    await page.getByRole("button", { name: "Rotate the key" }).click();
    await page.getByText("the old one works for 1 hour").waitFor();
    const rotated = await page.locator("#new-key").inputValue();
    expect(rotated).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(rotated).not.toBe(key);
    await check(page, "09-key-rotated");
    await bothAnswer(rotated, 200);
    expect(await statuses(key)).toEqual([200, 200]);
    api.clock.now += 3599;
    apiB.clock.now += 3599;
    expect(await statuses(key)).toEqual([200, 200]);
    api.clock.now += 2;
    apiB.clock.now += 2;
    expect(await statuses(key)).toEqual([401, 401]);
    expect(await statuses(rotated)).toEqual([200, 200]);

    // An operator, in a browser of their own, suspends the account (401 at A and B) and reinstates it (200 again).
    await operatorSuspendsAndReinstates("browser@example.test", rotated);

    // The partner's session ended with the suspension: signed in again, they revoke the key (401 at both).
    await page.goto(`${portal.url}/keys`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.getByLabel("Email").fill("browser@example.test");
    await page.getByLabel("Password").fill("a browser password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await check(page, "14-keys-rotated");
    await page.getByRole("link", { name: "Revoke my shop" }).click();
    await check(page, "15-revoke-confirm");
    await page.getByRole("button", { name: "Revoke the key" }).click();
    await page.getByText("The key was revoked.").waitFor();
    await check(page, "16-keys-revoked");
    await bothAnswer(rotated, 401);

    await page.getByRole("link", { name: "Account" }).click();
    await page.getByRole("heading", { name: "Activity" }).waitFor();
    // Each form that asks for the password names the account to a password manager, in a hidden username field.
    const usernames = page.locator('input[autocomplete="username"]');
    expect(await usernames.count()).toBe(3);
    for (const input of await usernames.all()) expect(await input.inputValue()).toBe("browser@example.test");
    await check(page, "17-account");
    await page.getByRole("button", { name: "Change the password" }).click();
    await page.getByText("Password is required").first().waitFor();
    await check(page, "17b-account-errors");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await check(page, "18-sign-in");
    await page.goto(`${portal.url}/keys`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.getByLabel("Email").fill("browser@example.test");
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByText("The email or the password is wrong").waitFor();
    await check(page, "19-sign-in-wrong");

    // The reset: its request, its check-your-mail page, and the page its link opens (username field filled in).
    await page.getByRole("link", { name: "Forgot your password?" }).click();
    await check(page, "20-reset");
    await page.getByLabel("Email").fill("browser@example.test");
    await page.getByRole("button", { name: "Send the link" }).click();
    await page.getByRole("heading", { name: "Check your mail" }).waitFor();
    await check(page, "21-reset-check-mail");
    await page.goto(linkIn(await smtp.waitForMail("browser@example.test", /Reset your/)));
    await page.getByRole("heading", { name: "Choose a new password" }).waitFor();
    expect(await page.locator('input[autocomplete="username"]').inputValue()).toBe("browser@example.test");
    await check(page, "22-reset-confirm");
    await page.goto(`${portal.url}/verify?token=used-or-unknown`);
    await check(page, "23-link-expired");
    await page.goto(`${portal.url}/no-such-page`);
    await check(page, "24-not-found");

    console.log(`portal screenshots: ${SHOTS}`);
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
    await context.close();
  });
});
