// The account's two-factor routes: set up TOTP (password, then a QR code and a code to confirm it), recovery codes
// shown once, new recovery codes and turning the app off (each needs a current code: a session alone cannot). The
// page and its trail are shared with the passkeys' routes (passkey-routes.ts).
import type { Hono } from "hono";
import type { Queries } from "../db/database.ts";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { accountOf, clientAddress, formOf, pageContext, render, requireAccount } from "./context.ts";
import { CodeSchema, TwoFactorSetupSchema, parseForm } from "./forms.ts";
import { verifyPassword } from "./passwords.ts";
import { recordSecurityEvent, securityRecipients } from "./security-mail.ts";
import type { SecurityEvent } from "./security-mail.ts";
import { listPasskeys } from "./store/passkeys.ts";
import { endOtherSessions } from "./store/sessions.ts";
import {
  confirmTotp,
  findTotp,
  recoveryCodesLeft,
  removeTotp,
  replaceRecoveryCodes,
  startTotp,
} from "./store/two-factor.ts";
import { checkCode, takeCodeAttempt, tooManyCodes } from "./two-factor-codes.ts";
import { missingSecondFactor } from "./two-factor-requirement.ts";
import type { CodeCheck } from "./two-factor-codes.ts";
import {
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  provisioningUri,
  qrSvg,
  recoveryCodeHash,
  sealSecret,
  totpStep,
  unsealSecret,
} from "./totp.ts";
import { recoveryCodesPage, setupPage, twoFactorPage } from "./views/two-factor-pages.ts";
import type { TwoFactorState } from "./views/two-factor-pages.ts";

const TITLE = "Two-factor sign-in";
const WRONG_CODE = "The code is wrong, or was used already";

/** The account's two-factor page with `status`. */
export async function showTwoFactor(
  portal: Portal,
  c: PortalContext,
  status: 200 | 400 | 401 | 409 | 429,
  state: Pick<TwoFactorState, "form" | "errors" | "message"> = {},
) {
  const account = accountOf(c);
  const factor = await findTotp(portal.db, account.id);
  const page = twoFactorPage(pageContext(c, portal), {
    ...state,
    available: portal.secretKey !== null,
    totp: factor?.confirmed ? { since: factor.confirmed } : null,
    passkeys: await listPasskeys(portal.db, account.id),
    codesLeft: await recoveryCodesLeft(portal.db, account.id),
    required: await requiredBy(portal, c),
  });
  return render(c, portal, status, TITLE, page);
}
const show = showTwoFactor;

/** The organisation that requires two-factor sign-in of the signed-in member, who has none yet; else undefined. */
const requiredBy = async (portal: Portal, c: PortalContext) =>
  (await missingSecondFactor(c, portal)) ? c.get("org")?.name : undefined;

/**
 * Records a change of the signed-in person's two-factor on their trail, and mails them about it (security-mail.ts), in
 * one transaction with `change` (see recordSecurityEvent).
 */
export const auditTwoFactor = (
  portal: Portal,
  c: PortalContext,
  what: Extract<SecurityEvent, { event: `twofactor.${string}` | `passkey.${string}` }>,
  detail = "",
  change?: (tx: Queries) => Promise<boolean>,
) => {
  const account = accountOf(c);
  const notice = {
    accountId: account.id,
    recipients: securityRecipients(account),
    at: portal.clock(),
    address: clientAddress(c),
    detail,
    what,
  };
  return recordSecurityEvent(portal, notice, change);
};
const audit = (
  portal: Portal,
  c: PortalContext,
  event: "twofactor.enabled" | "twofactor.disabled" | "twofactor.codes_renewed",
  detail = "",
) => auditTwoFactor(portal, c, { event }, detail);

/** The message under the code field of a code that did not pass (wrong, or not checked: locked). */
function refused(c: PortalContext, check: Extract<CodeCheck, { ok: false }>) {
  if (!check.wait) return { status: 401 as const, text: WRONG_CODE };
  c.header("Retry-After", String(check.wait));
  return { status: 429 as const, text: tooManyCodes(check.wait) };
}

/** Ten new recovery codes: as shown, and as stored (hashed). */
export function renewCodes(): { codes: string[]; hashes: string[] } {
  const codes = newRecoveryCodes();
  return { codes, hashes: codes.map((code) => recoveryCodeHash(normalizeRecoveryCode(code)!)) };
}

/** Adds the two-factor routes of the account page to `app`. */
export function registerTwoFactorRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  app.use("/account/two-factor", requireAccount);
  app.use("/account/two-factor/*", requireAccount);
  app.get("/account/two-factor", (c) => show(portal, c, 200));

  app.post("/account/two-factor/setup", async (c) => {
    const form = parseForm(TwoFactorSetupSchema, await formOf(c));
    if (!form.ok) return show(portal, c, 400, { form: "setup", errors: form.errors });
    const account = accountOf(c);
    if (!portal.secretKey) return show(portal, c, 409);
    if (!(await verifyPassword(form.data.current, account.password)))
      return show(portal, c, 401, { form: "setup", errors: { current: "The current password is wrong" } });
    const sealed = sealSecret(portal.secretKey, account.id, newTotpSecret());
    if (!(await startTotp(portal.db, account.id, sealed, portal.clock()))) return show(portal, c, 409);
    return c.redirect("/account/two-factor/setup", 303);
  });

  /** The factor being set up, opened: its sealed form and secret (null: none, or no key to open it). */
  const pending = async (c: PortalContext) => {
    const account = accountOf(c);
    const factor = await findTotp(portal.db, account.id);
    if (!factor || factor.confirmed !== null || !portal.secretKey) return null;
    const secret = unsealSecret(portal.secretKey, account.id, factor.sealed);
    return secret === null ? null : { sealed: factor.sealed, secret };
  };
  const setup = async (c: PortalContext, secret: string, status: 200 | 400 | 401 | 429, code?: string) => {
    const svg = await qrSvg(provisioningUri(secret, accountOf(c).email));
    const page = setupPage(pageContext(c, portal), svg, secret, code ? { code } : {}, await requiredBy(portal, c));
    return render(c, portal, status, "Set up two-factor sign-in", page);
  };

  app.get("/account/two-factor/setup", async (c) => {
    const factor = await pending(c);
    return factor ? setup(c, factor.secret, 200) : c.redirect("/account/two-factor", 303);
  });

  app.post("/account/two-factor/confirm", async (c) => {
    const factor = await pending(c);
    if (!factor) return c.redirect("/account/two-factor", 303);
    const form = parseForm(CodeSchema, await formOf(c));
    if (!form.ok) return setup(c, factor.secret, 400, form.errors.code);
    const account = accountOf(c);
    const now = portal.clock();
    // The same limits as every code, taken before the code is checked (two-factor-codes.ts).
    const limit = await takeCodeAttempt(c, portal, account.id, now);
    if (limit.wait) {
      c.header("Retry-After", String(limit.wait));
      return setup(c, factor.secret, 429, tooManyCodes(limit.wait));
    }
    const step = totpStep(factor.secret, form.data.code.replace(/\s/g, ""), now);
    if (step === null) return setup(c, factor.secret, 401, "The code is wrong: enter the one the app shows now");
    await limit.giveBack();
    const { codes, hashes } = renewCodes();
    if (!(await confirmTotp(portal.db, account.id, factor.sealed, step, hashes, now)))
      return c.redirect("/account/two-factor", 303);
    // Sessions signed in elsewhere with the password alone end: from now on a session needs both factors.
    await endOtherSessions(portal.db, account.id, c.get("sessionId"));
    await audit(portal, c, "twofactor.enabled");
    const intro = "Two-factor sign-in is on. Your other sessions are signed out.";
    return render(c, portal, 200, "Your recovery codes", recoveryCodesPage(intro, codes));
  });

  app.post("/account/two-factor/recovery-codes", async (c) => {
    const form = parseForm(CodeSchema, await formOf(c));
    if (!form.ok) return show(portal, c, 400, { form: "renew", errors: form.errors });
    const account = accountOf(c);
    const check = await checkCode(c, portal, account.id, form.data.code);
    if (!check.ok) {
      const { status, text } = refused(c, check);
      return show(portal, c, status, { form: "renew", errors: { code: text } });
    }
    const { codes, hashes } = renewCodes();
    await replaceRecoveryCodes(portal.db, account.id, hashes, portal.clock());
    await audit(portal, c, "twofactor.codes_renewed");
    const intro = "You have ten new recovery codes: the old ones no longer work.";
    return render(c, portal, 200, "Your recovery codes", recoveryCodesPage(intro, codes));
  });

  app.post("/account/two-factor/disable", async (c) => {
    const form = parseForm(CodeSchema, await formOf(c));
    if (!form.ok) return show(portal, c, 400, { form: "disable", errors: form.errors });
    const account = accountOf(c);
    const check = await checkCode(c, portal, account.id, form.data.code);
    if (!check.ok) {
      const { status, text } = refused(c, check);
      return show(portal, c, status, { form: "disable", errors: { code: text } });
    }
    // With a passkey left, two-factor stays on (and the recovery codes with it): only the app goes.
    const off = await removeTotp(portal.db, account.id);
    const how = check.how === "recovery" ? "with a recovery code" : "";
    await auditTwoFactor(portal, c, { event: "twofactor.disabled", passkeysLeft: !off }, how);
    const text = off ? "Two-factor sign-in is off." : "The authenticator app no longer signs in; your passkeys do.";
    return show(portal, c, 200, { message: { text, kind: "status" } });
  });
}
