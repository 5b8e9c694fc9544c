// Signing in with a passkey: alone (the sign-in page's button: any passkey of the portal on the authenticator, user
// verification required, so that it stands for both factors), or as the second step after the password (for the
// pending sign-in's account, one of its passkeys). The browser asks for options (a challenge kept for its form token),
// then sends the authenticator's answer in a form. Each answer takes an attempt from the limits of codes before it is
// checked (two-factor-codes.ts), uses its challenge once, and moves the passkey's counter forward by one statement.
import type { Hono } from "hono";
import type { Portal, PortalEnv } from "./context.ts";
import { clientAddress, formOf, limitAddress, pageContext, render } from "./context.ts";
import { authenticationOptions, checkAssertion, parseCredential } from "./passkeys.ts";
import { codeStep, finishSignIn, pendingSignIn } from "./signin-code-routes.ts";
import { recordAudit } from "./store/audit.ts";
import { findPasskey, keepChallenge, listPasskeys, useChallenge, usePasskey } from "./store/passkeys.ts";
import type { Passkey } from "./store/passkeys.ts";
import { takeAttempt, takeAttempts } from "./store/throttle.ts";
import { takeCodeAttempt, tooManyCodes } from "./two-factor-codes.ts";
import { signInForm } from "./views/auth-pages.ts";

const REFUSED = "The passkey did not sign you in: it is not one of this account's, or its answer was used already.";

/** Adds the routes of signing in with a passkey to `app`. */
export function registerPasskeySignInRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  // The options for the browser's navigator.credentials.get, as JSON (passkeys.js asks for them with the form token).
  // Each keeps a challenge row (for CHALLENGE_TTL_MS): a network asks for at most the address limit's count of them a
  // window, taken before the row is written, so that nobody can fill the table.
  app.post("/sign-in/passkey/options", async (c) => {
    if (c.get("account")) return c.json({ error: "You are signed in already." }, 409);
    const wait = await takeAttempt(
      portal.db,
      `passkey-options:${limitAddress(c)}`,
      portal.throttle.address,
      portal.clock(),
    );
    if (wait) {
      c.header("Retry-After", String(wait));
      return c.json({ error: `Too many passkey sign-ins from your network: try again in ${wait} s.` }, 429);
    }
    const signIn = await pendingSignIn(c, portal);
    const keys = signIn ? await listPasskeys(portal.db, signIn.accountId) : null;
    if (keys?.length === 0) return c.json({ error: "This account has no passkey: enter a code." }, 409);
    const options = await authenticationOptions(portal.publicUrl(), keys);
    const holder = { purpose: signIn ? ("second" as const) : ("first" as const), csrf: c.get("csrf") };
    await keepChallenge(
      portal.db,
      options.challenge,
      { ...holder, accountId: signIn?.accountId ?? null },
      portal.clock(),
    );
    return c.json(options);
  });

  app.post("/sign-in/passkey", async (c) => {
    const signIn = await pendingSignIn(c, portal);
    const sent = parseCredential((await formOf(c)).response);
    const key = sent ? await findPasskey(portal.db, sent.credential.id) : null;
    // The page to answer a refusal with: the code step's while a sign-in waits for its second step, else the sign-in's.
    const refuse = (status: 401 | 429, text: string) =>
      signIn
        ? codeStep(c, portal, signIn.accountId, status, {}, { text, kind: "alert" })
        : render(c, portal, status, "Sign in", signInForm(pageContext(c, portal), {}, {}, { text, kind: "alert" }));
    // The attempt is taken before anything is checked: from the account waiting (second step), else the passkey's
    // account; a passkey the portal does not know, from the client's network alone.
    const accountId = signIn?.accountId ?? key?.accountId ?? null;
    const now = portal.clock();
    const limit = accountId
      ? await takeCodeAttempt(c, portal, accountId, now)
      : { wait: await takeAttempts(portal.db, [[`address:${limitAddress(c)}`, portal.throttle.address]], now) };
    if (limit.wait) {
      c.header("Retry-After", String(limit.wait));
      return refuse(429, tooManyCodes(limit.wait).replace("codes", "codes or passkeys"));
    }
    const use = sent ? await useChallenge(portal.db, sent.challenge, c.get("csrf"), now) : null;
    const purpose = signIn ? "second" : "first";
    const right =
      sent &&
      key &&
      use &&
      use.purpose === purpose &&
      use.accountId === (signIn?.accountId ?? null) &&
      key.accountId === (signIn?.accountId ?? key.accountId)
        ? await assertionOf(portal, sent, key, purpose === "first", now)
        : false;
    if (!right) {
      if (accountId) {
        const entry = { at: now, event: signIn ? ("signin.code_failed" as const) : ("signin.failed" as const) };
        await recordAudit(portal.db, accountId, { ...entry, detail: "a passkey", address: clientAddress(c) });
      }
      return refuse(401, REFUSED);
    }
    if ("giveBack" in limit) await limit.giveBack();
    return finishSignIn(c, portal, key!.accountId, signIn?.token ?? null, "with a passkey");
  });
}

/**
 * Whether `sent` is a right assertion of `key` (of the waiting account, for a second step; with the user verified,
 * alone) whose counter is higher than the last one, and records its use.
 */
async function assertionOf(
  portal: Portal,
  sent: NonNullable<ReturnType<typeof parseCredential>>,
  key: Passkey,
  alone: boolean,
  now: number,
): Promise<boolean> {
  const userHandle = (sent.credential.response as { userHandle?: unknown }).userHandle;
  if (alone && userHandle !== Buffer.from(key.accountId).toString("base64url")) return false;
  const counter = await checkAssertion(portal.publicUrl(), sent.credential, sent.challenge, key, alone);
  return counter !== null && (await usePasskey(portal.db, key.id, counter, now));
}
