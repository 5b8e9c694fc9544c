// Resetting a forgotten password by a mailed link (which ends every session of the account).
import type { Hono } from "hono";
import { html } from "hono/html";
import { textFields } from "./account-access.ts";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { clientAddress, formOf, limitAddress, pageContext, render, renderTooMany } from "./context.ts";
import { ResetRequestSchema, ResetSchema, parseForm } from "./forms.ts";
import { takeMailLimits, tooManyMails } from "./mail-limits.ts";
import { hashPassword } from "./passwords.ts";
import { normalizeEmail, updateAccount } from "./store/accounts.ts";
import { recordSecurityEvent, securityRecipients } from "./security-mail.ts";
import type { SecurityNotice } from "./security-mail.ts";
import { endAllSessions } from "./store/sessions.ts";
import { clearFailures } from "./store/throttle.ts";
import { consumeToken, deleteTokens, tokenAccount } from "./store/tokens.ts";
import { checkMail, deadLink, resetForm, resetRequestForm } from "./views/auth-pages.ts";
import { notice } from "./views/layout.ts";

/** Adds the routes of resetting a password to `app`. */
export function registerResetRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const ctx = (c: PortalContext) => pageContext(c, portal);

  app.get("/reset", (c) => render(c, portal, 200, "Reset your password", resetRequestForm(ctx(c))));
  app.post("/reset", async (c) => {
    const body = textFields(await formOf(c));
    const form = parseForm(ResetRequestSchema, body);
    if (!form.ok) return render(c, portal, 400, "Reset your password", resetRequestForm(ctx(c), body, form.errors));
    const asker = { address: limitAddress(c), to: form.data.email };
    const wait = await takeMailLimits(portal, asker);
    if (wait)
      return renderTooMany(
        c,
        portal,
        wait,
        "Reset your password",
        html`${notice(tooManyMails(wait), "alert")}${resetRequestForm(ctx(c), body)}`,
      );
    // The same work whether or not the address has an account (the limits above, this row): the outbox's sender
    // looks the account up and issues the link, off the request path, so the answer's time says nothing either.
    await portal.mailer.send({ link: "reset", to: normalizeEmail(form.data.email) });
    return render(
      c,
      portal,
      200,
      "Check your mail",
      checkMail(ctx(c), `If ${normalizeEmail(form.data.email)} has an account, we sent it a link.`, {
        action: "/reset",
        email: normalizeEmail(form.data.email),
      }),
    );
  });
  app.get("/reset/confirm", async (c) => {
    const token = c.req.query("token") ?? "";
    const account = await tokenAccount(portal.db, token, "reset", portal.clock());
    if (!account) return render(c, portal, 404, "Link expired", deadLink);
    return render(c, portal, 200, "Choose a new password", resetForm(ctx(c), token, account.email));
  });
  app.post("/reset/confirm", async (c) => {
    const body = textFields(await formOf(c));
    const form = parseForm(ResetSchema, body);
    if (!form.ok) {
      const account = await tokenAccount(portal.db, body.token ?? "", "reset", portal.clock());
      const page = resetForm(ctx(c), body.token ?? "", account?.email ?? "", form.errors);
      return render(c, portal, 400, "Choose a new password", page);
    }
    const now = portal.clock();
    const used = await consumeToken(portal.db, form.data.token, "reset", now);
    if (!used || used.account.email !== used.email) return render(c, portal, 404, "Link expired", deadLink);
    const { account } = used;
    const password = await hashPassword(form.data.password);
    const reset: SecurityNotice = {
      accountId: account.id,
      recipients: securityRecipients(account),
      at: now,
      address: clientAddress(c),
      detail: "",
      what: { event: "password.reset" },
    };
    await recordSecurityEvent(portal, reset, (tx) =>
      updateAccount(tx, account.id, { password, verified: account.verified ?? now }),
    );
    await deleteTokens(portal.db, account.id); // every other link, issued under the old password
    await endAllSessions(portal.db, account.id);
    await clearFailures(portal.db, `account:${account.email}`);
    return c.redirect("/sign-in?reset=1", 303);
  });
}
