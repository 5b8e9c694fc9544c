// The second step of signing in to an account with two-factor: a right password gives no session, only a pending
// cookie (store/two-factor.ts keeps its hash for CHALLENGE_TTL_MS); a right code (or passkey: passkey-signin-routes.ts)
// for it starts the session. While a
// browser is between the steps, every page but the code step, the sign-in and the reset is answered with a redirect
// to the code step (the gate), so that no page can be reached with the password alone.
import type { Hono } from "hono";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { clientAddress, formOf, pageContext, render } from "./context.ts";
import { refuseInactive, startSession } from "./account-access.ts";
import { knownDevice, rememberDevice } from "./device-cookies.ts";
import { CodeSchema, parseForm } from "./forms.ts";
import type { FieldErrors } from "./forms.ts";
import { clearPendingCookie, readPendingCookie, writePendingCookie } from "./session-cookies.ts";
import { findAccount } from "./store/accounts.ts";
import { recordAudit } from "./store/audit.ts";
import { listPasskeys } from "./store/passkeys.ts";
import { challengeAccount, createChallenge, endChallenge, findTotp } from "./store/two-factor.ts";
import { checkCode, tooManyCodes } from "./two-factor-codes.ts";
import { signInForm } from "./views/auth-pages.ts";
import { codeStepPage } from "./views/two-factor-pages.ts";

const TITLE = "Enter your code";
/** The pages a browser between the two steps may still open. */
const OPEN_PATHS =
  /^\/(?:sign-in|sign-in\/code|sign-in\/passkey|sign-in\/passkey\/options|sign-out|reset|reset\/confirm|static\/[^/]+|favicon\.ico)$/;

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

/** The pending sign-in's token and account, if the browser has one that has not expired. */
export async function pendingSignIn(c: PortalContext, portal: Portal) {
  const token = readPendingCookie(c, c.get("secureCookies"));
  const accountId = token ? await challengeAccount(portal.db, token, portal.clock()) : null;
  return token && accountId ? { token, accountId } : null;
}

/** The sign-in form again, 401: a pending sign-in has expired or was finished by another request. */
function signInExpired(c: PortalContext, portal: Portal) {
  clearPendingCookie(c, c.get("secureCookies"));
  const text = "Your sign-in has expired: enter your password again.";
  return render(c, portal, 401, "Sign in", signInForm(pageContext(c, portal), {}, {}, { text, kind: "alert" }));
}

/**
 * Starts the session of `accountId`, whose second factor (or passkey alone) was right: ends the pending sign-in
 * `token` first (null: none, a passkey alone), so that of two requests finishing one sign-in at once only one does.
 * Answers the keys page, or why the account cannot sign in.
 */
export async function finishSignIn(
  c: PortalContext,
  portal: Portal,
  accountId: string,
  token: string | null,
  detail: string,
) {
  if (token && !(await endChallenge(portal.db, token))) return signInExpired(c, portal);
  clearPendingCookie(c, c.get("secureCookies"));
  const account = await findAccount(portal.db, accountId);
  if (!account) return signInExpired(c, portal);
  if (account.status !== "active") return refuseInactive(c, portal, account);
  const now = portal.clock();
  if (!(await knownDevice(c, portal, account.id, now))) await rememberDevice(c, portal, account.id, now);
  await startSession(c, portal, account, "signin", detail);
  return c.redirect("/keys", 303);
}

/** The code step's page for the account `accountId`: a code, or a passkey when it has one. */
export async function codeStep(
  c: PortalContext,
  portal: Portal,
  accountId: string,
  status: 200 | 400 | 401 | 429,
  errors: FieldErrors = {},
  message?: { text: string; kind: "status" | "alert" },
) {
  const offer = {
    totp: (await findTotp(portal.db, accountId))?.confirmed != null,
    passkey: (await listPasskeys(portal.db, accountId)).length > 0,
  };
  return render(c, portal, status, TITLE, codeStepPage(pageContext(c, portal), offer, errors, message));
}

/** Adds the code step's routes to `app`. */
export function registerCodeStepRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/sign-in/code", async (c) => {
    const signIn = await pendingSignIn(c, portal);
    return signIn ? codeStep(c, portal, signIn.accountId, 200) : c.redirect("/sign-in", 303);
  });

  app.post("/sign-in/code", async (c) => {
    const signIn = await pendingSignIn(c, portal);
    if (!signIn) return signInExpired(c, portal);
    const form = parseForm(CodeSchema, await formOf(c));
    if (!form.ok) return codeStep(c, portal, signIn.accountId, 400, form.errors);
    const now = portal.clock();
    const check = await checkCode(c, portal, signIn.accountId, form.data.code);
    if (!check.ok) {
      if (check.wait) {
        c.header("Retry-After", String(check.wait));
        const text = tooManyCodes(check.wait);
        return codeStep(c, portal, signIn.accountId, 429, {}, { text, kind: "alert" });
      }
      const entry = { at: now, event: "signin.code_failed" as const, detail: "", address: clientAddress(c) };
      await recordAudit(portal.db, signIn.accountId, entry);
      const text = "The code is wrong, or was used already.";
      return codeStep(c, portal, signIn.accountId, 401, {}, { text, kind: "alert" });
    }
    const detail = check.how === "totp" ? "with a TOTP code" : "with a recovery code";
    return finishSignIn(c, portal, signIn.accountId, signIn.token, detail);
  });
}
