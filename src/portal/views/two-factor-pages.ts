// The pages of two-factor sign-in: the account's two-factor page (set up, renew recovery codes, turn off), the setup
// page (QR code drawn by the portal, the secret as text, a code to confirm), recovery codes shown once, and the
// second step of signing in.
import { html, raw } from "hono/html";
import type { FieldErrors } from "../forms.ts";
import { csrfField, errorSummary, field, notice, usernameField, when } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";

/** What the account's two-factor page shows. */
export interface TwoFactorState {
  /** The portal has a secret key to seal TOTP secrets with. */
  available: boolean;
  /** When two-factor was turned on, and how many recovery codes are left; null: off. */
  on: { since: number; codesLeft: number } | null;
  form?: "setup" | "renew" | "disable";
  errors?: FieldErrors;
  message?: { text: string; kind: "status" | "alert" };
  /** The name of the organisation the session acts for, when it requires two-factor and the account has none. */
  required?: string | undefined;
}

/** Why a member was sent here (two-factor-requirement.ts): the organisation requires two-factor of every member. */
const requirement = (org: string | undefined) =>
  org
    ? html`<p class="notice alert" role="alert">
        ${org} requires two-factor sign-in of every member. Set it up here to go on using the portal for ${org}: until
        then every other page brings you back here.
      </p>`
    : "";

const CODE_HINT = "The 6-digit code your authenticator app shows now, or one of your recovery codes.";

/** The account's two-factor page. */
export function twoFactorPage(ctx: PageContext, state: TwoFactorState): Html {
  const errors = (form: TwoFactorState["form"]) => (state.form === form ? (state.errors ?? {}) : {});
  const top = html`${notice(state.message?.text, state.message?.kind)}${requirement(state.required)}`;
  if (state.on) {
    const [renew, off] = [errors("renew"), errors("disable")];
    return html`${top}
      <p>
        Two-factor sign-in is <strong>on</strong> since ${when(state.on.since)}: signing in asks for your password and
        then a code from your authenticator app, or one of your recovery codes.
      </p>
      <p>You have ${state.on.codesLeft} unused recovery code${state.on.codesLeft === 1 ? "" : "s"} of 10.</p>
      <h2>New recovery codes</h2>
      <form method="post" action="/account/two-factor/recovery-codes" novalidate>
        ${csrfField(ctx)}
        <p>Ten new codes replace the old ones, used or not.</p>
        ${field({ name: "code", id: "renew-code", label: "Code", error: renew.code, autocomplete: "one-time-code", hint: CODE_HINT })}
        <button type="submit">Make new recovery codes</button>
      </form>
      <h2>Turn two-factor sign-in off</h2>
      <form method="post" action="/account/two-factor/disable" novalidate>
        ${csrfField(ctx)}
        <p>Your password alone will sign in to the account again.</p>
        ${field({ name: "code", id: "off-code", label: "Code", error: off.code, autocomplete: "one-time-code", hint: CODE_HINT })}
        <button type="submit" class="danger">Turn two-factor sign-in off</button>
      </form>`;
  }
  if (!state.available)
    return html`${top}
      <p role="status">
        Two-factor sign-in is not available on this portal yet: its operator has not set the secret key it needs
        (PORTAL_SECRET_KEY).
      </p>`;
  const setup = errors("setup");
  return html`${top}${errorSummary(setup, { current: "Current password" })}
    <p>
      Two-factor sign-in is <strong>off</strong>. With it on, signing in asks for your password and then a code from an
      authenticator app on your phone (any app for TOTP codes), so that your password alone no longer opens the account.
    </p>
    <form method="post" action="/account/two-factor/setup" novalidate>
      ${csrfField(ctx)}${usernameField(ctx.account?.email ?? "")}
      ${field({ name: "current", label: "Current password", type: "password", error: setup.current, autocomplete: "current-password" })}
      <button type="submit">Set up two-factor sign-in</button>
    </form>`;
}

/** The secret in groups of four, as an app's "enter a key" field takes it. */
const grouped = (secret: string) => secret.match(/.{1,4}/g)!.join(" ");

/** The setup page: the QR code (`svg`, drawn by the portal) and `secret` as text, and the code that confirms them. */
export function setupPage(
  ctx: PageContext,
  svg: string,
  secret: string,
  errors: FieldErrors = {},
  required?: string,
): Html {
  return html`${requirement(required)}${errorSummary(errors, { code: "Code" })}
    <h2>1. Add the account to your authenticator app</h2>
    <p>Scan this QR code with the app:</p>
    <div class="qr" role="img" aria-label="QR code of your two-factor secret, for an authenticator app">
      ${raw(svg)}
    </div>
    <p>Or type this key into the app (time-based, 6 digits, every 30 seconds):</p>
    <p><code class="totp-secret">${grouped(secret)}</code></p>
    <h2>2. Enter the code it shows</h2>
    <form method="post" action="/account/two-factor/confirm" novalidate>
      ${csrfField(ctx)}
      ${field({ name: "code", label: "Code", error: errors.code, autocomplete: "one-time-code", inputmode: "numeric", hint: "The 6-digit code the app shows now." })}
      <button type="submit">Turn two-factor sign-in on</button>
    </form>
    <p><a href="/account/two-factor">Not now</a></p>`;
}

/** Recovery codes, shown this once. */
export function recoveryCodesPage(intro: string, codes: string[]): Html {
  return html`<p role="status">${intro}</p>
    <p>
      These are your recovery codes. Keep them somewhere safe, apart from your phone (a password manager, or printed):
      if you lose the authenticator app, a recovery code is the only way into the account; a password reset by email
      does not turn two-factor off. Each code works once. They are shown only now.
    </p>
    <ol class="recovery-codes">
      ${codes.map((code) => html`<li><code>${code}</code></li>`)}
    </ol>
    <p><a href="/account/two-factor">I have kept them: back to two-factor sign-in</a></p>`;
}

/** The second step of signing in: a code, after a right password. */
export function codeStepPage(
  ctx: PageContext,
  errors: FieldErrors = {},
  message?: { text: string; kind: "status" | "alert" },
): Html {
  return html`${notice(message?.text, message?.kind)}
    <p>
      Your password was right. Two-factor sign-in is on for this account: enter the code your authenticator app shows.
    </p>
    <form method="post" action="/sign-in/code" novalidate>
      ${csrfField(ctx)}
      ${field({ name: "code", label: "Code", error: errors.code, autocomplete: "one-time-code", hint: "6 digits, or one of your recovery codes (XXXX-XXXX-XXXX-XXXX) if you have lost the app." })}
      <button type="submit">Sign in</button>
    </form>
    <p><a href="/sign-in">Sign in again</a> (another account, or the password again).</p>`;
}
