// The second step of signing in to an account with two-factor: a right password gives no session, only a pending
// cookie (store/two-factor.ts keeps its hash for CHALLENGE_TTL_MS); a right code for it starts the session. While a
// browser is between the steps, every page but the code step, the sign-in and the reset is answered with a redirect
// to the code step (the gate), so that no page can be reached with the password alone.
import type { Hono } from "hono";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { clientAddress, formOf, pageContext, render } from "./context.ts";
import { notYet, startSession } from "./account-access.ts";
import { knownDevice, rememberDevice } from "./device-cookies.ts";
import { CodeSchema, parseForm } from "./forms.ts";
import { clearPendingCookie, readPendingCookie, writePendingCookie } from "./session-cookies.ts";
import { findAccount } from "./store/accounts.ts";
import { recordAudit } from "./store/audit.ts";
import { challengeAccount, createChallenge, endChallenge } from "./store/two-factor.ts";
import { checkCode, tooManyCodes } from "./two-factor-codes.ts";
import { signInForm } from "./views/auth-pages.ts";
import { codeStepPage } from "./views/two-factor-pages.ts";

const TITLE = "Enter your code";
/** The pages a browser between the two steps may still open. */
const OPEN_PATHS = /^\/(?:sign-in|sign-in\/code|sign-out|reset|reset\/confirm|static\/[^/]+|favicon\.ico)$/;

/** After a right password of an account with two-factor: the pending cookie, and the code step. */
export async function awaitCode(c: PortalContext, portal: Portal, accountId: string) {
  const token = await createChallenge(portal.db, accountId, portal.clock());
  writePendingCookie(c, c.get("secureCookies"), token);
  return c.redirect("/sign-in/code", 303);
}

/** Middleware (after the sessions'): a browser between the steps, with no session, is sent to the code step. */
export function useCodeStepGate(app: Hono<PortalEnv>, portal: Portal): void {
  app.use(async (c, next) => {
    if (c.get("account") || OPEN_PATHS.test(c.req.path)) return next();
    const token = readPendingCookie(c, c.get("secureCookies"));
    if (token && (await challengeAccount(portal.db, token, portal.clock()))) return c.redirect("/sign-in/code", 303);
    return next();
  });
}

/** Adds the code step's routes to `app`. */
export function registerCodeStepRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const ctx = (c: PortalContext) => pageContext(c, portal);
  /** The pending sign-in's token and account, if the browser has one that has not expired. */
  const pending = async (c: PortalContext) => {
    const token = readPendingCookie(c, c.get("secureCookies"));
    const accountId = token ? await challengeAccount(portal.db, token, portal.clock()) : null;
    return token && accountId ? { token, accountId } : null;
  };
  /** The sign-in form again: the pending sign-in has expired or was finished by another request. */
  const expired = (c: PortalContext) => {
    clearPendingCookie(c, c.get("secureCookies"));
    const text = "Your sign-in has expired: enter your password again.";
    return render(c, portal, 401, "Sign in", signInForm(ctx(c), {}, {}, { text, kind: "alert" }));
  };

  app.get("/sign-in/code", async (c) =>
    (await pending(c)) ? render(c, portal, 200, TITLE, codeStepPage(ctx(c))) : c.redirect("/sign-in", 303),
  );

  app.post("/sign-in/code", async (c) => {
    const signIn = await pending(c);
    if (!signIn) return expired(c);
    const form = parseForm(CodeSchema, await formOf(c));
    if (!form.ok) return render(c, portal, 400, TITLE, codeStepPage(ctx(c), form.errors));
    const now = portal.clock();
    const check = await checkCode(c, portal, signIn.accountId, form.data.code);
    if (!check.ok) {
      if (check.wait) {
        c.header("Retry-After", String(check.wait));
        const text = tooManyCodes(check.wait);
        return render(c, portal, 429, TITLE, codeStepPage(ctx(c), {}, { text, kind: "alert" }));
      }
      const entry = { at: now, event: "signin.code_failed" as const, detail: "", address: clientAddress(c) };
      await recordAudit(portal.db, signIn.accountId, entry);
      const text = "The code is wrong, or was used already.";
      return render(c, portal, 401, TITLE, codeStepPage(ctx(c), {}, { text, kind: "alert" }));
    }
    if (!(await endChallenge(portal.db, signIn.token))) return expired(c);
    clearPendingCookie(c, c.get("secureCookies"));
    const account = await findAccount(portal.db, signIn.accountId);
    if (!account) return expired(c);
    if (account.status !== "active")
      return render(
        c,
        portal,
        403,
        account.status === "pending" ? "Waiting for approval" : "Account suspended",
        notYet(account),
      );
    if (!(await knownDevice(c, portal, account.id, now))) await rememberDevice(c, portal, account.id, now);
    await startSession(
      c,
      portal,
      account,
      "signin",
      check.how === "totp" ? "with a TOTP code" : "with a recovery code",
    );
    return c.redirect("/keys", 303);
  });
}
