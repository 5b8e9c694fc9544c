// Signing in (limited per client address and per account) and out.
import type { Hono } from "hono";
import { html } from "hono/html";
import { notYet, sendVerification, startSession, textFields } from "./account-access.ts";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { clientAddress, formOf, pageContext, render, renderTooMany } from "./context.ts";
import { SignInSchema, parseForm } from "./forms.ts";
import { mailWait, tooManyMails } from "./mail-limits.ts";
import { dummyHash, verifyPassword } from "./passwords.ts";
import { clearSessionCookie } from "./session-cookies.ts";
import { findAccountByEmail, normalizeEmail } from "./store/accounts.ts";
import { recordAudit } from "./store/audit.ts";
import { endSession } from "./store/sessions.ts";
import { clearFailures, lockedFor, recordFailure } from "./store/throttle.ts";
import { checkMail, signInForm } from "./views/auth-pages.ts";

/** Adds the routes of signing in and out to `app`. */
export function registerSignInRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const ctx = (c: PortalContext) => pageContext(c, portal);

  app.get("/sign-in", (c) => {
    const text = c.req.query("reset")
      ? "Your password is changed: sign in with the new one."
      : c.req.query("signed-out")
        ? "You are signed out."
        : undefined;
    return render(c, portal, 200, "Sign in", signInForm(ctx(c), {}, {}, text ? { text, kind: "status" } : undefined));
  });
  app.post("/sign-in", async (c) => {
    const body = textFields(await formOf(c));
    const form = parseForm(SignInSchema, body);
    if (!form.ok) return render(c, portal, 400, "Sign in", signInForm(ctx(c), body, form.errors));
    const now = portal.clock();
    const address = clientAddress(c);
    const keys = { address: `address:${address}`, account: `account:${normalizeEmail(form.data.email)}` };
    const wait = await lockedFor(portal.db, [keys.address, keys.account], now);
    if (wait > 0) {
      c.header("Retry-After", String(wait));
      const text = `Too many failed sign-ins: try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""}, or reset your password.`;
      return render(c, portal, 429, "Sign in", signInForm(ctx(c), body, {}, { text, kind: "alert" }));
    }
    const account = await findAccountByEmail(portal.db, form.data.email);
    const right = await verifyPassword(form.data.password, account?.password ?? (await dummyHash()));
    if (!account || !right) {
      await recordFailure(portal.db, keys.address, portal.throttle.address, now);
      await recordFailure(portal.db, keys.account, portal.throttle.account, now);
      if (account) await recordAudit(portal.db, account.id, { at: now, event: "signin.failed", detail: "", address });
      const text = "The email or the password is wrong.";
      return render(c, portal, 401, "Sign in", signInForm(ctx(c), body, {}, { text, kind: "alert" }));
    }
    await clearFailures(portal.db, keys.account);
    if (account.verified === null) {
      const wait = await mailWait(portal, { address, to: account.email });
      if (wait)
        return renderTooMany(
          c,
          portal,
          wait,
          "Confirm your email first",
          html`<p role="alert">Your address is not confirmed yet. ${tooManyMails(wait)}</p>`,
        );
      await sendVerification(portal, account, address);
      return render(
        c,
        portal,
        403,
        "Confirm your email first",
        checkMail(`Your address is not confirmed yet: we sent a new link to ${account.email}.`),
      );
    }
    if (account.status !== "active")
      return render(
        c,
        portal,
        403,
        account.status === "pending" ? "Waiting for approval" : "Account suspended",
        notYet(account),
      );
    await startSession(c, portal, account, "signin");
    return c.redirect("/keys", 303);
  });

  app.post("/sign-out", async (c) => {
    const id = c.get("sessionId");
    const account = c.get("account");
    if (id && account) {
      await endSession(portal.db, id);
      await recordAudit(portal.db, account.id, {
        at: portal.clock(),
        event: "signout",
        detail: "",
        address: clientAddress(c),
      });
    }
    clearSessionCookie(c, c.get("secureCookies"));
    return c.redirect("/sign-in?signed-out=1", 303);
  });
}
