// Issue 36's walk, in a real browser (Debian's Chromium, playwright-core), on SQLite and on PostgreSQL: an owner
// invites a developer and a viewer; the viewer sees no way to make a key and its direct POST is refused; the developer
// makes a key and the owner is mailed; the owner sets up TOTP and requires two-factor of every member, and the
// developer is sent to set it up, adds a passkey (Chromium's virtual authenticator, the DevTools protocol's WebAuthn
// domain) and signs in with it; the owner signs in with TOTP (a wrong code and a replayed one refused) and with a
// recovery code, which works once; a removed member's open page is refused at its next request. Every page is checked
// with axe-core at a desktop's width and a phone's, and a screenshot of each is kept.
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { loadKeysFile } from "../../src/keys/keys-file.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount } from "../../src/portal/store/accounts.ts";
import { checkWidths, openPhone, signInWithPassword } from "./page-check.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { linkIn } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
const PASSWORD = "correct horse battery";
const REQUIRED = "Acme Partners requires two-factor sign-in of every member.";
const WRONG_CODE = "The code is wrong, or was used already.";

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

describe.each(bothDatabases(() => postgres))("issue 36's walk in Chromium on $name", ({ name, url }) => {
  /** Kept after the run (overwritten by the next), to be looked at. */
  const shots = join(tmpdir(), `flash-sale-security-walk-${name.toLowerCase()}`);
  // Addresses of this database's walk: the SMTP sink is shared by both.
  const OWNER = `owner-${name.toLowerCase()}@example.test`;
  const DEV = `dev-${name.toLowerCase()}@example.test`;
  const VIEWER = `viewer-${name.toLowerCase()}@example.test`;
  let portal: TestPortal;
  let browser: Browser;
  const problems: string[] = [];

  const check = async (page: Page, shot: string) => {
    problems.push(...(await checkWidths(page, shot, shots)));
  };
  /** A phone's browser of its own, whose script errors and CSP refusals are problems. */
  const phone = async () => (await openPhone(browser, problems)).page;
  const signIn = (page: Page, email: string) => signInWithPassword(page, portal.url, email, PASSWORD);
  const signOut = (page: Page) => page.getByRole("button", { name: "Sign out" }).click();
  const codeAt = (secret: string, at: number) =>
    new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });
  /** From the two-factor page: TOTP set up; its secret and the ten recovery codes. */
  const setUpTotp = async (page: Page) => {
    await page.locator('form[action="/account/two-factor/setup"]').getByLabel("Current password").fill(PASSWORD);
    await page.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    const secret = (await page.locator("code.totp-secret").innerText()).replace(/\s/g, "");
    await page.getByRole("textbox", { name: "Code" }).fill(codeAt(secret, portal.clock.now));
    await page.getByRole("button", { name: "Turn two-factor sign-in on" }).click();
    await page.getByRole("heading", { name: "Your recovery codes" }).waitFor();
    return { secret, codes: await page.locator("ol.recovery-codes code").allInnerTexts() };
  };
  /** The invitation last mailed to `email`, opened in `page`: its account made with the password, and joined. */
  const join_ = async (page: Page, email: string) => {
    const link = new URL(linkIn(await smtp.waitForMail(email, /You are invited/)));
    await page.goto(`${portal.url}${link.pathname}${link.search}`);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Make my account and join" }).click();
  };
  const keysMade = async () => (await loadKeysFile(portal.keysFile)).keys.length;

  beforeAll(async () => {
    await rm(shots, { recursive: true, force: true });
    await mkdir(shots, { recursive: true });
    // WebAuthn's RP ID is a host name, not an address.
    portal = await startTestPortal(smtp, { host: "localhost", databaseUrl: await url(), secretKey: randomBytes(32) });
    const now = portal.clock.now;
    await createAccount(
      portal.db,
      { email: OWNER, partner: "Acme Partners", password: await hashPassword(PASSWORD), verified: now },
      now,
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  it("walks roles, a key's mail, required two-factor, passkeys, TOTP, a recovery code and a removal", async () => {
    // The owner invites a developer and a viewer, who make their accounts from the mailed links.
    const owner = await phone();
    await signIn(owner, OWNER);
    await owner.getByRole("link", { name: "Team" }).click();
    for (const [email, role] of [
      [DEV, "developer"],
      [VIEWER, "viewer"],
    ] as const) {
      await owner.getByLabel("Email").fill(email);
      await owner.getByLabel("Role", { exact: true }).selectOption(role);
      await owner.getByRole("button", { name: "Send the invitation" }).click();
      await owner.getByText("The invitation is sent.").waitFor();
    }
    await check(owner, "01-owner-invited");
    const developer = await phone();
    const cdp = await developer.context().newCDPSession(developer);
    await cdp.send("WebAuthn.enable");
    await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
    await join_(developer, DEV);
    await developer.getByRole("heading", { name: "API keys" }).waitFor();
    const viewer = await phone();
    await join_(viewer, VIEWER);
    await viewer.getByRole("heading", { name: "Usage" }).waitFor();

    // The viewer: no way to make a key is shown, and a POST made by hand with its own CSRF token is refused.
    await check(viewer, "02-viewer-usage");
    expect(await viewer.getByRole("link", { name: "API keys" }).count()).toBe(0);
    expect(await viewer.getByText(/create key|new key/i).count()).toBe(0);
    const token = await viewer.locator("input[name=_csrf]").first().inputValue();
    const before = await keysMade();
    const posted = await viewer.context().request.post(`${portal.url}/keys`, {
      form: { _csrf: token, name: "made by a viewer" },
      headers: { Origin: portal.url },
      maxRedirects: 0,
    });
    expect(posted.status()).toBe(403);
    expect(await keysMade()).toBe(before);

    // The developer makes a key; the owner is mailed.
    await developer.getByLabel("Name").fill("made by dev");
    await developer.getByRole("button", { name: "Create key" }).click();
    await developer.getByRole("heading", { name: "Your new key" }).waitFor();
    expect(await keysMade()).toBe(before + 1);
    const keyMail = await smtp.waitForMail(OWNER, /new API key was made/i);
    expect(keyMail.body).toMatch(/made by dev/);

    // The owner sets up TOTP and requires two-factor of every member; the developer is sent to set it up.
    await owner.goto(`${portal.url}/account/two-factor`);
    const { secret, codes } = await setUpTotp(owner);
    await owner.goto(`${portal.url}/team/settings`);
    await owner.getByLabel("Require two-factor sign-in for every member").check();
    await owner.getByRole("button", { name: "Save the two-factor setting" }).click();
    await owner.getByText("Two-factor sign-in is now required of every member.").waitFor();
    await check(owner, "03-owner-requires-two-factor");
    await developer.goto(`${portal.url}/keys`);
    await developer.getByText(REQUIRED).waitFor();
    expect(new URL(developer.url()).pathname).toBe("/account/two-factor");
    await check(developer, "04-developer-sent-to-set-up");

    // The developer adds a passkey (the virtual authenticator), which meets the requirement, and signs in with it alone.
    await developer.getByLabel("Passkey name").fill("Dev's phone");
    const add = developer.locator('form[action="/account/two-factor/passkeys/new"]');
    await add.getByLabel("Current password").fill(PASSWORD);
    await developer.getByRole("button", { name: "Add a passkey" }).click();
    await developer.getByRole("button", { name: "Create the passkey" }).click();
    await developer.getByRole("heading", { name: "Your recovery codes" }).waitFor();
    await developer.goto(`${portal.url}/keys`);
    await developer.getByRole("heading", { name: "API keys" }).waitFor();
    await signOut(developer);
    await developer.getByRole("button", { name: "Sign in with a passkey" }).click();
    await developer.getByRole("heading", { name: "API keys" }).waitFor();
    expect(await developer.getByText(REQUIRED).count()).toBe(0);
    await check(developer, "05-developer-signed-in-with-passkey");

    // The owner signs in with TOTP: a wrong code and the code already used at setup are refused; the next step's works.
    await signOut(owner);
    await signIn(owner, OWNER);
    await owner.getByRole("heading", { name: "Enter your code" }).waitFor();
    await owner.goto(`${portal.url}/keys`); // two-factor cannot be skipped by going to a page directly
    expect(new URL(owner.url()).pathname).toBe("/sign-in/code");
    await owner.getByRole("textbox", { name: "Code" }).fill(codeAt(secret, portal.clock.now + 10 * 30_000));
    await owner.getByRole("button", { name: "Sign in", exact: true }).click();
    await owner.getByText(WRONG_CODE).waitFor();
    await owner.getByRole("textbox", { name: "Code" }).fill(codeAt(secret, portal.clock.now));
    await owner.getByRole("button", { name: "Sign in", exact: true }).click();
    await owner.getByText(WRONG_CODE).waitFor();
    await check(owner, "06-owner-replayed-code");
    portal.clock.now += 30_000;
    await owner.getByRole("textbox", { name: "Code" }).fill(codeAt(secret, portal.clock.now));
    await owner.getByRole("button", { name: "Sign in", exact: true }).click();
    await owner.getByRole("heading", { name: "API keys" }).waitFor();

    // A recovery code signs in once.
    for (const works of [true, false]) {
      await signOut(owner);
      await signIn(owner, OWNER);
      await owner.getByRole("textbox", { name: "Code" }).fill(codes[0]!);
      await owner.getByRole("button", { name: "Sign in", exact: true }).click();
      if (works) await owner.getByRole("heading", { name: "API keys" }).waitFor();
      else await owner.getByText(WRONG_CODE).waitFor();
    }
    expect(new URL(owner.url()).pathname).toBe("/sign-in/code");
    portal.clock.now += 30_000;
    await owner.getByRole("textbox", { name: "Code" }).fill(codeAt(secret, portal.clock.now));
    await owner.getByRole("button", { name: "Sign in", exact: true }).click();
    await owner.getByRole("heading", { name: "API keys" }).waitFor();

    // The owner removes the viewer, whose open page is signed out at its next request.
    await owner.goto(`${portal.url}/team`);
    await owner.getByRole("button", { name: `Remove ${VIEWER}` }).click();
    await owner.getByText("The member is removed").waitFor();
    await viewer.reload();
    expect(new URL(viewer.url()).pathname).toBe("/sign-in");

    expect(problems).toEqual([]);
  });
});
