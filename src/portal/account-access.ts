// What lets an account in, shared by signing up and signing in: the verification mail, a new session on this
// browser, and why an account that is not active may not sign in yet.
import { html } from "hono/html";
import type { Portal, PortalContext } from "./context.ts";
import { clientAddress } from "./context.ts";
import { sendCounted } from "./mail-limits.ts";
import { writeSessionCookie } from "./session-cookies.ts";
import type { Account } from "./store/accounts.ts";
import { recordAudit } from "./store/audit.ts";
import { createSession } from "./store/sessions.ts";
import { issueToken } from "./store/tokens.ts";

/** The text fields of a submitted form (what a page shows back in its fields). */
export const textFields = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).filter((e): e is [string, string] => typeof e[1] === "string"));

/** Mails `account` a verification link (counted against the mail limits of `address`, the client's). */
export async function sendVerification(portal: Portal, account: Account, address: string): Promise<void> {
  const token = await issueToken(portal.db, account.id, "verify", account.email, portal.clock());
  await sendCounted(
    portal,
    { address, to: account.email },
    {
      to: account.email,
      subject: "Confirm your email address for the developer portal",
      text: `Open this link to confirm your address (it works once, for 24 hours):\n\n${portal.publicUrl()}/verify?token=${token}\n`,
    },
  );
}

/** Why an account that is not active cannot sign in. */
export const notYet = (account: Account) =>
  account.status === "pending"
    ? html`<p role="status">
        Your email address is confirmed. An operator approves new accounts: we will mail you when yours is ready.
      </p>`
    : html`<p role="alert">This account is suspended. Write to the operator of this portal.</p>`;

/** Starts a session for `account` on this browser and records the sign-in. */
export async function startSession(
  c: PortalContext,
  portal: Portal,
  account: Account,
  event: "signin" | "account.verified",
): Promise<void> {
  const now = portal.clock();
  const id = await createSession(portal.db, account.id, now);
  writeSessionCookie(c, c.get("secureCookies"), id);
  await recordAudit(portal.db, account.id, { at: now, event, detail: "", address: clientAddress(c) });
}
