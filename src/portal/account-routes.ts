// The account page's routes: password, email (verified again), deletion (keys revoked first), and the new email's link.
import type { Hono } from "hono";
import { html } from "hono/html";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { accountOf, clientAddress, fieldOf, formOf, pageContext, render, requireAccount } from "./context.ts";
import { DeleteAccountSchema, EmailChangeSchema, PasswordChangeSchema, parseForm } from "./forms.ts";
import type { FieldErrors } from "./forms.ts";
import { mailWait, sendCounted, tooManyMails } from "./mail-limits.ts";
import { revokeAllPartnerKeys } from "./partner-keys.ts";
import { hashPassword, verifyPassword } from "./passwords.ts";
import { clearSessionCookie, writeSessionCookie } from "./session-cookies.ts";
import { deleteAccount, findAccount, findAccountByEmail, normalizeEmail, updateAccount } from "./store/accounts.ts";
import { listAudit, recordAudit } from "./store/audit.ts";
import type { AuditEvent } from "./store/audit.ts";
import { createSession, endAllSessions } from "./store/sessions.ts";
import { consumeToken, issueToken, peekToken } from "./store/tokens.ts";
import { accountPage } from "./views/account-pages.ts";
import type { AccountForms } from "./views/account-pages.ts";
import { confirmLink, deadLink } from "./views/auth-pages.ts";

const WRONG_PASSWORD = "The current password is wrong";

/** Adds the account page's routes to `app`. */
export function registerAccountRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const show = async (c: PortalContext, status: 200 | 400 | 401 | 429, state: AccountForms = {}) =>
    render(
      c,
      portal,
      status,
      "Account",
      accountPage(pageContext(c, portal), await listAudit(portal.db, accountOf(c).id), state),
    );
  const audit = (c: PortalContext, event: AuditEvent, detail = "") =>
    recordAudit(portal.db, accountOf(c).id, { at: portal.clock(), event, detail, address: clientAddress(c) });
  /** The form parsed and the current password checked; the page to answer otherwise. */
  const check = async <T extends { current: string }>(
    c: PortalContext,
    form: { ok: true; data: T } | { ok: false; errors: FieldErrors },
    which: AccountForms["form"],
  ) => {
    if (!form.ok) return { page: await show(c, 400, { form: which, errors: form.errors }) };
    if (!(await verifyPassword(form.data.current, accountOf(c).password)))
      return { page: await show(c, 401, { form: which, errors: { current: WRONG_PASSWORD } }) };
    return { data: form.data };
  };

  app.use("/account", requireAccount);
  app.use("/account/*", requireAccount);
  app.get("/account", (c) => show(c, 200, { message: c.req.query("changed") ? "Saved." : undefined }));

  app.post("/account/password", async (c) => {
    const { page, data } = await check(c, parseForm(PasswordChangeSchema, await formOf(c)), "password");
    if (!data) return page;
    const account = accountOf(c);
    await updateAccount(portal.db, account.id, { password: await hashPassword(data.password) });
    await endAllSessions(portal.db, account.id); // every session, this one too: a new one for this browser
    writeSessionCookie(c, c.get("secureCookies"), await createSession(portal.db, account.id, portal.clock()));
    await audit(c, "password.changed");
    return c.redirect("/account?changed=1", 303);
  });

  app.post("/account/email", async (c) => {
    const { page, data } = await check(c, parseForm(EmailChangeSchema, await formOf(c)), "email");
    if (!data) return page;
    const email = normalizeEmail(data.email);
    const account = accountOf(c);
    const asker = { address: clientAddress(c), to: email, account: account.id };
    const wait = await mailWait(portal, asker);
    if (wait) {
      c.header("Retry-After", String(wait));
      return show(c, 429, { form: "email", errors: { email: tooManyMails(wait) } });
    }
    // Counted whether or not another account has the address: the limit says nothing about which ones do.
    const taken = await findAccountByEmail(portal.db, email);
    const token = taken ? null : await issueToken(portal.db, account.id, "email", email, portal.clock());
    await sendCounted(
      portal,
      asker,
      token
        ? {
            to: email,
            subject: "Confirm your new email address for the developer portal",
            text: `Open this link to make this your account's address (it works once, for 24 hours):\n\n${portal.publicUrl()}/email/confirm?token=${token}\n`,
          }
        : null,
    );
    await audit(c, "email.change_requested", email);
    return show(c, 200, { message: `We sent a link to ${email}: your address changes when you open it.` });
  });

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
    const account = used && (await findAccount(portal.db, used.accountId));
    if (!used || !account || !(await updateAccount(portal.db, account.id, { email: used.email, verified: now })))
      return render(c, portal, 404, "Link expired", deadLink);
    await recordAudit(portal.db, account.id, {
      at: now,
      event: "email.changed",
      detail: `${account.email} -> ${used.email}`,
      address: clientAddress(c),
    });
    return render(
      c,
      portal,
      200,
      "Email changed",
      html`<p role="status">Your account's address is now ${used.email}.</p>
        <p><a href="/keys">Your keys</a></p>`,
    );
  });

  app.post("/account/delete", async (c) => {
    const { page, data } = await check(c, parseForm(DeleteAccountSchema, await formOf(c)), "delete");
    if (!data) return page;
    const account = accountOf(c);
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
