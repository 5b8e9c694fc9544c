// The pages of two-factor sign-in: the account's two-factor page (the authenticator app set up or turned off, the
// passkeys: passkey-pages.ts, new recovery codes), the setup page (QR code drawn by the portal, the secret as text, a
// code to confirm), recovery codes shown once, and the second step of signing in (a code, or a passkey).
import { html, raw } from "hono/html";
import type { FieldErrors } from "../forms.ts";
import { csrfField, errorSummary, field, notice, usernameField, when } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";
import { passkeySecondStep, passkeysSection } from "./passkey-pages.ts";
import type { PasskeyRow } from "./passkey-pages.ts";

/** What the account's two-factor page shows. */
export interface TwoFactorState {
  /** The portal has a secret key to seal TOTP secrets with. */
  available: boolean;
  /** When the authenticator app (TOTP) was confirmed; null: none. */
  totp: { since: number } | null;
  passkeys: PasskeyRow[];
  /** Recovery codes not used yet. */
  codesLeft: number;
  /** The form sent back: setup, renew, disable, passkey-add, rename:<id>, remove:<id>. */
  form?: string;
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

/** The account's two-factor page: whether it is on, the authenticator app, the passkeys, the recovery codes. */
export function twoFactorPage(ctx: PageContext, state: TwoFactorState): Html {
  const errors = (form: string) => (state.form === form ? (state.errors ?? {}) : {});
  const on = state.totp !== null || state.passkeys.length > 0;
  const [renew, setup] = [errors("renew"), errors("setup")];
  const how = [state.totp ? "a code from your authenticator app" : "", state.passkeys.length ? "a passkey" : ""];
  return html`${notice(state.message?.text, state.message?.kind)}${requirement(state.required)}${errorSummary(setup, { current: "Current password" })}
    ${
      on
        ? html`<p>
            Two-factor sign-in is <strong>on</strong>: signing in asks for your password and then
            ${how.filter(Boolean).join(" or ")}, or one of your recovery codes.
          </p>`
        : html`<p>
            Two-factor sign-in is <strong>off</strong>. With it on, signing in asks for your password and then a code
            from an authenticator app on your phone (any app for TOTP codes) or a passkey, so that your password alone
            no longer opens the account.
          </p>`
    }
    <h2>Authenticator app</h2>
    ${totpSection(ctx, state, errors("disable"))}
    ${passkeysSection(ctx, state.passkeys, { form: state.form, errors: state.errors }, state.totp !== null)}
    ${
      on
        ? html`<h2>Recovery codes</h2>
            <p>
              If you lose your authenticator app and your passkeys, a recovery code is the only way into the account (a
              password reset by email does not turn two-factor off).
            </p>
            <p>${`You have ${state.codesLeft} unused recovery code${state.codesLeft === 1 ? "" : "s"} of 10.`}</p>
            <form method="post" action="/account/two-factor/recovery-codes" novalidate>
              ${csrfField(ctx)}
              <p>Ten new codes replace the old ones, used or not.</p>
              ${field({ name: "code", id: "renew-code", label: "Code", error: renew.code, autocomplete: "one-time-code", hint: state.totp ? CODE_HINT : "One of your recovery codes." })}
              <button type="submit">Make new recovery codes</button>
            </form>`
        : ""
    }`;
}

/** The authenticator app's part: turn it off (a current code), set it up (the password), or not available. */
function totpSection(ctx: PageContext, state: TwoFactorState, off: FieldErrors): Html {
  if (state.totp) {
    const last = state.passkeys.length === 0;
    return html`<p>Your authenticator app gives codes since ${when(state.totp.since)}.</p>
      <form method="post" action="/account/two-factor/disable" novalidate>
        ${csrfField(ctx)}
        <p>
          ${
            last
              ? "Turning it off turns two-factor sign-in off: your password alone will sign in to the account again."
              : "Your passkeys and recovery codes stay: two-factor sign-in stays on."
          }
        </p>
        ${field({ name: "code", id: "off-code", label: "Code", error: off.code, autocomplete: "one-time-code", hint: CODE_HINT })}
        <button type="submit" class="danger">
          ${last ? "Turn two-factor sign-in off" : "Stop using the authenticator app"}
        </button>
      </form>`;
  }
  if (!state.available)
    return html`<p role="status">
      Codes from an authenticator app are not available on this portal yet: its operator has not set the secret key they
      need (PORTAL_SECRET_KEY).
    </p>`;
  const setup = state.form === "setup" ? (state.errors ?? {}) : {};
  return html`<p>An app on your phone that shows a new 6-digit code every 30 seconds (any app for TOTP codes).</p>
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
      if you lose your authenticator app and your passkeys, a recovery code is the only way into the account; a password
      reset by email does not turn two-factor off. Each code works once. They are shown only now.
    </p>
    <ol class="recovery-codes">
      ${codes.map((code) => html`<li><code>${code}</code></li>`)}
    </ol>
    <p><a href="/account/two-factor">I have kept them: back to two-factor sign-in</a></p>`;
}

/** The second step of signing in, after a right password: a code (an app's or a recovery code), or a passkey. */
export function codeStepPage(
  ctx: PageContext,
  offer: { totp: boolean; passkey: boolean },
  errors: FieldErrors = {},
  message?: { text: string; kind: "status" | "alert" },
): Html {
  const hint = offer.totp
    ? "6 digits, or one of your recovery codes (XXXX-XXXX-XXXX-XXXX) if you have lost the app."
    : "One of your recovery codes (XXXX-XXXX-XXXX-XXXX), if you cannot use your passkey.";
  const codeForm = html`<form method="post" action="/sign-in/code" novalidate>
    ${csrfField(ctx)} ${field({ name: "code", label: "Code", error: errors.code, autocomplete: "one-time-code", hint })}
    <button type="submit" ${offer.totp ? "" : html`class="secondary"`}>Sign in</button>
  </form>`;
  return html`${notice(message?.text, message?.kind)}
    <p>
      Your password was right. Two-factor sign-in is on for this account:
      ${offer.totp ? "enter the code your authenticator app shows" : "use your passkey, or enter a recovery code"}.
    </p>
    ${
      offer.totp
        ? html`${codeForm}${offer.passkey ? passkeySecondStep(ctx, false) : ""}`
        : html`${passkeySecondStep(ctx, true)}
            <h2>Or enter a recovery code</h2>
            ${codeForm}`
    }
    <p><a href="/sign-in">Sign in again</a> (another account, or the password again).</p>`;
}
