// Signing up, and confirming the email address by the mailed link (which signs the account in, once approved).
import type { Hono } from "hono";
import { html } from "hono/html";
import { notYet, startSession, textFields } from "./account-access.ts";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { clientAddress, fieldOf, formOf, limitAddress, pageContext, render, renderTooMany } from "./context.ts";
import { ResetRequestSchema, SignUpSchema, parseForm } from "./forms.ts";
import { accountExistsMail } from "./link-mails.ts";
import { takeMailLimits, tooManyMails } from "./mail-limits.ts";
import { hashPassword } from "./passwords.ts";
import { createAccount, normalizeEmail, updateAccount } from "./store/accounts.ts";
import { recordAudit } from "./store/audit.ts";
import { consumeToken, deleteTokens, peekToken } from "./store/tokens.ts";
import { checkMail, confirmLink, deadLink, signUpForm } from "./views/auth-pages.ts";

/** The check-your-mail page's form that sends a verification link to `email` again. */
const resend = (email: string) => ({ action: "/sign-up/resend" as const, email });
import { notice } from "./views/layout.ts";

/** Adds the routes of signing up and verifying an email address to `app`. */
export function registerSignUpRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const ctx = (c: PortalContext) => pageContext(c, portal);

  app.get("/sign-up", (c) => render(c, portal, 200, "Sign up", signUpForm(ctx(c))));
  app.post("/sign-up", async (c) => {
    const body = textFields(await formOf(c));
    const form = parseForm(SignUpSchema, body);
    if (!form.ok) return render(c, portal, 400, "Sign up", signUpForm(ctx(c), body, form.errors));
    // The mail is taken from the limits before anything else is done: requests sent at once cannot all pass.
    const asker = { address: limitAddress(c), to: form.data.email };
    const wait = await takeMailLimits(portal, asker);
    if (wait)
      return renderTooMany(
        c,
        portal,
        wait,
        "Sign up",
        html`${notice(tooManyMails(wait), "alert")}${signUpForm(ctx(c), body)}`,
      );
    const now = portal.clock();
    const password = await hashPassword(form.data.password);
    const status = portal.approval === "manual" ? "pending" : "active";
    const account = await createAccount(portal.db, { ...form.data, password, status }, now);
    if (account) {
      await recordAudit(portal.db, account.id, {
        at: now,
        event: "account.created",
        detail: "",
        address: clientAddress(c),
      });
      await portal.mailer.send({ link: "verify", accountId: account.id });
    } else {
      // The address has an account: tell its owner, not whoever typed it (the page says the same either way).
      await portal.mailer.send(accountExistsMail(normalizeEmail(form.data.email), portal.publicUrl()));
    }
    const email = normalizeEmail(form.data.email);
    return render(c, portal, 200, "Check your mail", checkMail(ctx(c), `We sent a link to ${email}.`, resend(email)));
  });

  // "Send the link again", from the page above (or sign-in's for an address not confirmed yet): under the same mail
  // limits, and the same work whatever the address (the outbox's sender looks the account up).
  app.post("/sign-up/resend", async (c) => {
    const form = parseForm(ResetRequestSchema, textFields(await formOf(c)));
    if (!form.ok) return c.redirect("/sign-up", 303); // only a forged form sends no address
    const email = normalizeEmail(form.data.email);
    const wait = await takeMailLimits(portal, { address: limitAddress(c), to: email });
    if (wait)
      return renderTooMany(
        c,
        portal,
        wait,
        "Check your mail",
        html`${notice(tooManyMails(wait), "alert")}${checkMail(ctx(c), "We sent the link already.", resend(email))}`,
      );
    await portal.mailer.send({ link: "verify", to: email });
    const sent = `If ${email} has an account waiting to be confirmed, we sent it a new link.`;
    return render(c, portal, 200, "Check your mail", checkMail(ctx(c), sent, resend(email)));
  });

  app.get("/verify", async (c) => {
    const token = c.req.query("token") ?? "";
    if (!(await peekToken(portal.db, token, "verify", portal.clock())))
      return render(c, portal, 404, "Link expired", deadLink);
    return render(
      c,
      portal,
      200,
      "Confirm your email",
      confirmLink(
        ctx(c),
        "/verify",
        token,
        "One step left: confirm that this is your address.",
        "Confirm my email address",
      ),
    );
  });
  app.post("/verify", async (c) => {
    const token = await fieldOf(c, "token");
    const used = await consumeToken(portal.db, token, "verify", portal.clock());
    // A link of an address confirmed since (another link, a reset) is dead: it never signs anyone in.
    if (!used || used.account.email !== used.email || used.account.verified !== null)
      return render(c, portal, 404, "Link expired", deadLink);
    const { account } = used;
    await updateAccount(portal.db, account.id, { verified: portal.clock() });
    await deleteTokens(portal.db, account.id); // issued before the address was confirmed
    if (account.status !== "active") {
      await recordAudit(portal.db, account.id, {
        at: portal.clock(),
        event: "account.verified",
        detail: "",
        address: clientAddress(c),
      });
      return render(c, portal, 200, "Email confirmed", notYet(account));
    }
    await startSession(c, portal, account, "account.verified");
    return c.redirect("/keys?verified=1", 303);
  });
}
