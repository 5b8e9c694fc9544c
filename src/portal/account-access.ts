// What lets an account in, shared by signing up and signing in: the verification mail, a new session on this
// browser, and why an account that is not active may not sign in yet.
import { html } from "hono/html";
import type { Portal, PortalContext } from "./context.ts";
import { clientAddress, render } from "./context.ts";
import { takeMailLimits } from "./mail-limits.ts";
import { writeSessionCookie } from "./session-cookies.ts";
import type { Account } from "./store/accounts.ts";
import { recordAudit } from "./store/audit.ts";
import { listMemberships } from "./store/organisations.ts";
import { createSession } from "./store/sessions.ts";

/** The text fields of a submitted form (what a page shows back in its fields). */
export const textFields = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).filter((e): e is [string, string] => typeof e[1] === "string"));

/**
 * Queues a verification link for `account`, taking it from the mail limits of `address` (the client's) and of the
 * account's address first: 0 when queued, else the seconds to wait (nothing was queued).
 */
export async function sendVerification(portal: Portal, account: Account, address: string): Promise<number> {
  const wait = await takeMailLimits(portal, { address, to: account.email });
  if (!wait) await portal.mailer.send({ link: "verify", accountId: account.id });
  return wait;
}

/** Why an account that is not active cannot sign in. */
export const notYet = (account: Account) =>
  account.status === "pending"
    ? html`<p role="status">
        Your email address is confirmed. An operator approves new accounts: we will mail you when yours is ready.
      </p>`
    : html`<p role="alert">This account is suspended. Write to the operator of this portal.</p>`;

/** The 403 page of an account that may not sign in yet (pending) or any more (suspended). */
export const refuseInactive = (c: PortalContext, portal: Portal, account: Account) =>
  render(c, portal, 403, account.status === "pending" ? "Waiting for approval" : "Account suspended", notYet(account));

/**
 * Starts a session for `account` on this browser and records the sign-in (`detail`: how, when it says). It acts for
 * `orgId`, or else for the account's own organisation if it is still a member of it, or else the first it joined
 * (none: null).
 */
export async function startSession(
  c: PortalContext,
  portal: Portal,
  account: Account,
  event: "signin" | "account.verified",
  detail = "",
  orgId?: string,
): Promise<void> {
  const now = portal.clock();
  const org = orgId ?? (await listMemberships(portal.db, account.id))[0]?.id ?? null;
  const id = await createSession(portal.db, account.id, now, org);
  writeSessionCookie(c, c.get("secureCookies"), id);
  await recordAudit(portal.db, account.id, { at: now, event, detail, address: clientAddress(c) });
}
