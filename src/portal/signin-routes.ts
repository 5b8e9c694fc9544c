// Signing in and out. A sign-in takes an attempt from its limits (the client's network, and the account or the device)
// before its password is hashed, so that guesses sent at once meet the same limits as guesses sent one by one.
import type { Hono } from "hono";
import { html } from "hono/html";
import { refuseInactive, sendVerification, startSession, textFields } from "./account-access.ts";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { clientAddress, formOf, limitAddress, pageContext, render, renderTooMany } from "./context.ts";
import { knownDevice, rememberDevice } from "./device-cookies.ts";
import { SignInSchema, parseForm } from "./forms.ts";
import { tooManyMails } from "./mail-limits.ts";
import { HashingBusyError } from "./hash-pool.ts";
import { dummyHash, hashPassword, needsRehash, verifyPassword } from "./passwords.ts";
import { clearPendingCookie, clearSessionCookie } from "./session-cookies.ts";
import { awaitCode } from "./signin-code-routes.ts";
import { findAccountByEmail, normalizeEmail, updateAccount } from "./store/accounts.ts";
import { recordAudit } from "./store/audit.ts";
import { endSession } from "./store/sessions.ts";
import { hasSecondFactor } from "./store/two-factor.ts";
import { returnAttempt, takeAttempts } from "./store/throttle.ts";
import type { ThrottleRule } from "./store/throttle.ts";
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
    const account = await findAccountByEmail(portal.db, form.data.email);
    // Each attempt is taken from the limits before the password is hashed: from the client's network's, and from the
    // account's (by email, known or not), or the device's when the browser has signed in to the account before.
    const device = account ? await knownDevice(c, portal, account.id, now) : null;
    const limits: [string, ThrottleRule][] = [
      [`address:${limitAddress(c)}`, portal.throttle.address],
      device
        ? [`device:${device}`, portal.throttle.account]
        : [`account:${normalizeEmail(form.data.email)}`, portal.throttle.account],
    ];
    const wait = await takeAttempts(portal.db, limits, now);
    if (wait > 0) {
      c.header("Retry-After", String(wait));
      const text = `Too many failed sign-ins: try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""}, or reset your password.`;
      return render(c, portal, 429, "Sign in", signInForm(ctx(c), body, {}, { text, kind: "alert" }));
    }
    // Past the hashing pool this throws HashingBusyError (503): the attempt stays taken, so that one client cannot keep
    // the pool full by sending again and again.
    const right = await verifyPassword(form.data.password, account?.password ?? dummyHash());
    if (!account || !right) {
      if (account) await recordAudit(portal.db, account.id, { at: now, event: "signin.failed", detail: "", address });
      const text = "The email or the password is wrong.";
      return render(c, portal, 401, "Sign in", signInForm(ctx(c), body, {}, { text, kind: "alert" }));
    }
    for (const [key] of limits) await returnAttempt(portal.db, key); // a success does not count against a limit
    if (needsRehash(account.password)) await rehash(portal, account.id, form.data.password);
    if (account.verified === null) {
      // The mail limits are taken as the link is queued (sendVerification), not checked before it.
      const wait = await sendVerification(portal, account, limitAddress(c));
      if (wait)
        return renderTooMany(
          c,
          portal,
          wait,
          "Confirm your email first",
          html`<p role="alert">Your address is not confirmed yet. ${tooManyMails(wait)}</p>`,
        );
      return render(
        c,
        portal,
        403,
        "Confirm your email first",
        checkMail(ctx(c), `Your address is not confirmed yet: we sent a new link to ${account.email}.`, {
          action: "/sign-up/resend",
          email: account.email,
        }),
      );
    }
    if (account.status !== "active") return refuseInactive(c, portal, account);
    // Two-factor: no session yet, only a pending sign-in that the code step finishes (signin-code-routes.ts).
    if (await hasSecondFactor(portal.db, account.id)) return awaitCode(c, portal, account.id);
    if (!device) await rememberDevice(c, portal, account.id, now);
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
    clearPendingCookie(c, c.get("secureCookies")); // a sign-in waiting for its code, too
    return c.redirect("/sign-in?signed-out=1", 303);
  });
}

/**
 * Stores `password` hashed at the current parameters, after a sign-in checked it against a hash of older ones. When
 * the pool is busy it is left for a later sign-in: the sign-in itself goes on.
 */
async function rehash(portal: Portal, accountId: string, password: string): Promise<void> {
  try {
    await updateAccount(portal.db, accountId, { password: await hashPassword(password) });
  } catch (err) {
    if (!(err instanceof HashingBusyError)) throw err;
  }
}
