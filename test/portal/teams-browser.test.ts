// Issue 36's teams in a real browser (Debian's Chromium, playwright-core), on SQLite: an owner invites a developer and
// a viewer from the team page; the developer opens the mailed link and makes an account, and makes a key, which the
// owner sees with its maker; the viewer, who has an account, signs in, opens the link again and joins, and sees usage
// and no way to make a key; the owner removes the viewer, whose open page is signed out at its next request; an
// operator sees the organisation's members. Every page is checked with axe-core (no violation of any impact) at a
// desktop's width and a phone's, and a screenshot of each is kept.
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { hashPassword } from "../../src/portal/passwords.ts";
import { createAccount, updateAccount } from "../../src/portal/store/accounts.ts";
import { checkWidths, openPhone, signInWithPassword } from "./page-check.ts";
import { startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { linkIn, startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CHROMIUM = requireProgram("chromium");
/** Kept after the run (overwritten by the next), to be looked at. */
const SHOTS = join(tmpdir(), "flash-sale-portal-team-screenshots");
const PASSWORD = "correct horse battery";

describe("teams in Chromium", () => {
  let smtp: SmtpServer;
  let portal: TestPortal;
  let browser: Browser;
  const problems: string[] = [];

  const check = async (page: Page, name: string) => {
    problems.push(...(await checkWidths(page, name, SHOTS)));
  };
  /** A phone's browser of its own, whose script errors and CSP refusals are problems. */
  const phone = async () => (await openPhone(browser, problems)).page;
  /** An account made in the database, its address confirmed (an admin when `operator`). */
  const account = async (email: string, partner: string, operator = false) => {
    const now = portal.clock.now;
    const made = await createAccount(
      portal.db,
      { email, partner, password: await hashPassword(PASSWORD), verified: now },
      now,
      !operator,
    );
    if (operator) await updateAccount(portal.db, made!.id, { role: "admin" });
    return made!;
  };
  const signIn = (page: Page, email: string) => signInWithPassword(page, portal.url, email, PASSWORD);
  const invitation = async (email: string) => {
    const link = new URL(linkIn(await smtp.waitForMail(email, /You are invited/)));
    return `${portal.url}${link.pathname}${link.search}`;
  };

  beforeAll(async () => {
    await rm(SHOTS, { recursive: true, force: true });
    await mkdir(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    portal = await startTestPortal(smtp);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await smtp?.stop();
  });

  it("walks an invitation of a developer and a viewer, their roles, and a removal", async () => {
    const founder = await account("owner@example.test", "Acme Partners");
    await account("viewer@example.test", "Viewer's Shop");
    const owner = await phone();
    await signIn(owner, "owner@example.test");
    await owner.getByRole("link", { name: "Team" }).click();
    await owner.getByRole("heading", { name: "Team" }).waitFor();
    await check(owner, "01-team-owner");
    for (const [email, role] of [
      ["dev@example.test", "developer"],
      ["viewer@example.test", "viewer"],
    ] as const) {
      await owner.getByLabel("Email").fill(email);
      await owner.getByLabel("Role", { exact: true }).selectOption(role);
      await owner.getByRole("button", { name: "Send the invitation" }).click();
      await owner.getByText("The invitation is sent.").waitFor();
    }
    await check(owner, "02-team-invited");

    // The developer has no account: the link makes one, which joins; they make a key.
    const dev = await phone();
    await dev.goto(await invitation("dev@example.test"));
    await check(dev, "03-invite-new-account");
    await dev.getByLabel("Password").fill(PASSWORD);
    await dev.getByRole("button", { name: "Make my account and join" }).click();
    await dev.getByRole("heading", { name: "API keys" }).waitFor();
    await dev.getByLabel("Name").fill("made by dev");
    await dev.getByRole("button", { name: "Create key" }).click();
    await dev.getByRole("heading", { name: "Your new key" }).waitFor();
    await dev.getByRole("link", { name: "API keys" }).click();
    await check(dev, "04-developer-keys");
    expect(await dev.getByRole("link", { name: "Team" }).count()).toBe(1);

    // The viewer has an account: signs in, opens the link again, joins; usage only.
    const viewer = await phone();
    const link = await invitation("viewer@example.test");
    await viewer.goto(link);
    await check(viewer, "05-invite-sign-in-first");
    await signIn(viewer, "viewer@example.test");
    await viewer.goto(link);
    await check(viewer, "06-invite-accept");
    await viewer.getByRole("button", { name: "Join Acme Partners" }).click();
    await viewer.getByRole("heading", { name: "Usage" }).waitFor();
    await check(viewer, "07-viewer-usage");
    expect(await viewer.getByRole("link", { name: "API keys" }).count()).toBe(0);
    expect(await viewer.getByRole("button", { name: "Create key" }).count()).toBe(0);
    await viewer.goto(`${portal.url}/keys`); // sent to usage, no form
    expect(new URL(viewer.url()).pathname).toBe("/usage");
    await viewer.getByRole("link", { name: "Team" }).click();
    await check(viewer, "08-viewer-team");

    // The owner sees the key's maker and the members; removes the viewer, whose next request is signed out.
    await owner.goto(`${portal.url}/keys`);
    const item = owner.locator("li", { has: owner.getByRole("heading", { name: "made by dev" }) });
    expect(await item.locator("dd", { hasText: /^dev@example\.test$/ }).count()).toBe(1);
    await owner.goto(`${portal.url}/team`);
    await check(owner, "09-team-members");
    await owner.getByRole("button", { name: "Remove viewer@example.test" }).click();
    await owner.getByText("The member is removed").waitFor();
    await viewer.reload();
    expect(new URL(viewer.url()).pathname).toBe("/sign-in");

    // An operator sees the organisation's members.
    await account("operator@example.test", "Operations", true);
    const operator = await phone();
    await signIn(operator, "operator@example.test");
    await operator.goto(`${portal.url}/admin/accounts/${founder.id}`);
    await operator.getByRole("heading", { name: "Its organisation's members" }).waitFor();
    const members = operator.getByRole("table", { name: /members of the organisation/ });
    expect(await members.getByRole("cell", { name: "dev@example.test", exact: true }).count()).toBe(1);
    await check(operator, "10-operator-members");

    expect(problems).toEqual([]);
  });
});
