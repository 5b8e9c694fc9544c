// The account page's routes: password, email (verified again), deletion (keys revoked first), and the new email's link.
import type { Hono } from "hono";
import { html } from "hono/html";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import {
  accountOf,
  clientAddress,
  fieldOf,
  formOf,
  limitAddress,
  pageContext,
  render,
  requireAccount,
} from "./context.ts";
import { DeleteAccountSchema, EmailChangeSchema, PasswordChangeSchema, parseForm } from "./forms.ts";
import type { FieldErrors } from "./forms.ts";
import { returnMailLimits, takeMailLimits, tooManyMails } from "./mail-limits.ts";
import { revokeAllPartnerKeys } from "./partner-keys.ts";
import { hashPassword, verifyPassword } from "./passwords.ts";
import { clearSessionCookie, writeSessionCookie } from "./session-cookies.ts";
import { deleteAccount, normalizeEmail, updateAccount } from "./store/accounts.ts";
import { recordSecurityEvent, securityRecipients } from "./security-mail.ts";
import type { SecurityEvent, SecurityNotice } from "./security-mail.ts";
import { holdsATeam } from "./store/organisations.ts";
import { listAudit, recordAudit } from "./store/audit.ts";
import type { AuditEvent } from "./store/audit.ts";
import { createSession, endAllSessions, endOtherSessions } from "./store/sessions.ts";
import { consumeToken, deleteTokens, peekToken } from "./store/tokens.ts";
import { accountPage } from "./views/account-pages.ts";
import type { AccountForms } from "./views/account-pages.ts";
import { confirmLink, deadLink } from "./views/auth-pages.ts";

const WRONG_PASSWORD = "The current password is wrong";
const CHANGED_MEANWHILE = "The password was changed by another request just now: sign in again with the new one";

/** A security event on the signed-in account, by this request (security-mail.ts). */
const notice = (portal: Portal, c: PortalContext, what: SecurityEvent, detail = ""): SecurityNotice => ({
  accountId: accountOf(c).id,
  recipients: securityRecipients(accountOf(c)),
  at: portal.clock(),
  address: clientAddress(c),
  detail,
  what,
});

/** The account page, with the account's trail. */
const show = async (portal: Portal, c: PortalContext, status: 200 | 400 | 401 | 409 | 429, state: AccountForms = {}) =>
  render(
    c,
    portal,
    status,
    "Account",
    accountPage(pageContext(c, portal), await listAudit(portal.db, accountOf(c).id), state),
  );

/** Records a change on the signed-in account's trail. */
const audit = (portal: Portal, c: PortalContext, event: AuditEvent, detail = "") =>
  recordAudit(portal.db, accountOf(c).id, { at: portal.clock(), event, detail, address: clientAddress(c) });

/** The form parsed and the current password checked; the page to answer otherwise. */
const check = async <T extends { current: string }>(
  portal: Portal,
  c: PortalContext,
  form: { ok: true; data: T } | { ok: false; errors: FieldErrors },
  which: AccountForms["form"],
) => {
  if (!form.ok) return { page: await show(portal, c, 400, { form: which, errors: form.errors }) };
  if (!(await verifyPassword(form.data.current, accountOf(c).password)))
    return { page: await show(portal, c, 401, { form: which, errors: { current: WRONG_PASSWORD } }) };
  return { data: form.data };
};

/** Adds the account page's routes to `app`. */
export function registerAccountRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  app.use("/account", requireAccount);
  app.use("/account/*", requireAccount);
  app.get("/account", (c) => show(portal, c, 200, { message: c.req.query("changed") ? "Saved." : undefined }));
  registerPasswordChange(app, portal);
  registerEmailChange(app, portal);
  registerEmailConfirmation(app, portal);
  registerDeletion(app, portal);
}

/** A new password: every session ended and every mailed link dropped, this browser signed in again. */
function registerPasswordChange(app: Hono<PortalEnv>, portal: Portal): void {
  app.post("/account/password", async (c) => {
    const { page, data } = await check(portal, c, parseForm(PasswordChangeSchema, await formOf(c)), "password");
    if (!data) return page;
    const account = accountOf(c);
    const password = await hashPassword(data.password);
    // Only over the password just checked: of two changes sent at once, the second finds it changed, and is refused.
    const changed = await recordSecurityEvent(portal, notice(portal, c, { event: "password.changed" }), async (tx) =>
      Boolean(
        await tx.run("UPDATE accounts SET password = ? WHERE id = ? AND password = ?", [
          password,
          account.id,
          account.password,
        ]),
      ),
    );
    if (!changed) return show(portal, c, 409, { form: "password", errors: { current: CHANGED_MEANWHILE } });
    await deleteTokens(portal.db, account.id); // links mailed under the old password
    await endAllSessions(portal.db, account.id); // every session, this one too: a new one for this browser
    const again = await createSession(portal.db, account.id, portal.clock(), c.get("org")?.id ?? null);
    writeSessionCookie(c, c.get("secureCookies"), again);
    return c.redirect("/account?changed=1", 303);
  });
}

/** A new email address asked for: a link mailed to it, within the mail limits. */
function registerEmailChange(app: Hono<PortalEnv>, portal: Portal): void {
  app.post("/account/email", async (c) => {
    const form = parseForm(EmailChangeSchema, await formOf(c));
    if (!form.ok) return show(portal, c, 400, { form: "email", errors: form.errors });
    const email = normalizeEmail(form.data.email);
    const account = accountOf(c);
    // The mail is taken from the limits first (requests sent at once cannot all pass), given back if the password
    // is wrong; then the same work whether or not another account has the address: the outbox's sender checks that.
    const asker = { address: limitAddress(c), to: email, account: account.id };
    const wait = await takeMailLimits(portal, asker);
    if (wait) {
      c.header("Retry-After", String(wait));
      return show(portal, c, 429, { form: "email", errors: { email: tooManyMails(wait) } });
    }
    const { page } = await check(portal, c, form, "email");
    if (page) {
      await returnMailLimits(portal, asker);
      return page;
    }
    await audit(portal, c, "email.change_requested", email);
    await portal.mailer.send({ link: "email", accountId: account.id, to: email });
    return show(portal, c, 200, { message: `We sent a link to ${email}: your address changes when you open it.` });
  });
}

/** The new address's link: a page to confirm it, and the change (the old address is mailed). */
function registerEmailConfirmation(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/email/confirm", async (c) => {
    const token = c.req.query("token") ?? "";
    if (!(await peekToken(portal.db, token, "email", portal.clock())))
      return render(c, portal, 404, "Link expired", deadLink);
    const text = "Confirm that this is your account's new email address.";
    return render(
      c,
      portal,
      200,
      "Confirm your new email",
      confirmLink(pageContext(c, portal), "/email/confirm", token, text, "Confirm the new address"),
    );
  });
  app.post("/email/confirm", async (c) => {
    const now = portal.clock();
    const used = await consumeToken(portal.db, await fieldOf(c, "token"), "email", now);
    const changed =
      used &&
      (await recordSecurityEvent(
        portal,
        {
          accountId: used.account.id,
          // The old address and the new one: whoever holds the old one learns of it, and may object.
          recipients: [...securityRecipients(used.account), used.email],
          at: now,
          address: clientAddress(c),
          detail: `${used.account.email} -> ${used.email}`,
          what: { event: "email.changed", from: used.account.email, to: used.email },
        },
        (tx) => updateAccount(tx, used.account.id, { email: used.email, verified: now }),
      ));
    if (!used || !changed) return render(c, portal, 404, "Link expired", deadLink);
    const { account } = used; // as it was: the old address
    await deleteTokens(portal.db, account.id); // links mailed to, or about, the old address
    // Signed in elsewhere under the old address: signed out. This browser, if it is the account's, stays signed in.
    const here = c.get("account")?.id === account.id ? c.get("sessionId") : null;
    await endOtherSessions(portal.db, account.id, here);
    return render(
      c,
      portal,
      200,
      "Email changed",
      html`<p role="status">Your account's address is now ${used.email}.</p>
        <p><a href="/keys">Your keys</a></p>`,
    );
  });
}

/** The account's deletion: its keys revoked first, then the account, and this browser signed out. */
function registerDeletion(app: Hono<PortalEnv>, portal: Portal): void {
  app.post("/account/delete", async (c) => {
    const { page, data } = await check(portal, c, parseForm(DeleteAccountSchema, await formOf(c)), "delete");
    if (!data) return page;
    const account = accountOf(c);
    if (await holdsATeam(portal.db, account.id))
      return show(portal, c, 409, {
        form: "delete",
        errors: {
          current:
            "Your team would be left without you: make another member an owner, or remove the other members, on the team page first",
        },
      });
    await revokeAllPartnerKeys(portal.keysFile, account.id, portal.clock());
    await deleteAccount(portal.db, account.id);
    clearSessionCookie(c, c.get("secureCookies"));
    c.set("account", null);
    return render(
      c,
      portal,
      200,
      "Account deleted",
      html`<p role="status">Your account is deleted and its keys are revoked.</p>`,
    );
  });
}
