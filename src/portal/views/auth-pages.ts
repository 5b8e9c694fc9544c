// The pages of signing up, verifying an email, signing in and resetting a password.
import { html } from "hono/html";
import type { FieldErrors } from "../forms.ts";
import { csrfField, errorSummary, field, notice, usernameField } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";
import { passkeySignIn } from "./passkey-pages.ts";

/** The sign-up form's fields, in its order, by name. */
const SIGN_UP_LABELS = { partner: "Partner name", email: "Email", password: "Password" };

/** The sign-up form; sent back with `errors`, a summary of them above it. */
export function signUpForm(ctx: PageContext, values: Record<string, string> = {}, errors: FieldErrors = {}): Html {
  return html`${errorSummary(errors, SIGN_UP_LABELS)}
    <p>Make an account to get API keys for the flash-sale API.</p>
    <form method="post" action="/sign-up" novalidate>
      ${csrfField(ctx)}
      ${field({ name: "partner", label: SIGN_UP_LABELS.partner, value: values.partner, error: errors.partner, autocomplete: "organization", hint: "Your company or project, as we should call it." })}
      ${field({ name: "email", label: SIGN_UP_LABELS.email, type: "email", value: values.email, error: errors.email, autocomplete: "username" })}
      ${field({ name: "password", label: "Password", type: "password", error: errors.password, autocomplete: "new-password", hint: "At least 12 characters." })}
      <button type="submit">Sign up</button>
    </form>
    <p>Have an account? <a href="/sign-in">Sign in</a>.</p>`;
}

/** Where "send the link again" posts: a verification link (sign-up, sign-in), or a reset link. */
export type ResendAction = "/sign-up/resend" | "/reset";

/**
 * After sign-up, a sign-in of an unconfirmed address or a reset request: the same words whether or not the address
 * has an account, and a form that sends the link again (the same mail limits as the first).
 */
export const checkMail = (ctx: PageContext, what: string, resend: { action: ResendAction; email: string }) =>
  html`<p role="status">${what} Check your mail for the link (it may take a minute); it works once.</p>
    <form method="post" action="${resend.action}">
      ${csrfField(ctx)}<input type="hidden" name="email" value="${resend.email}" />
      <p>No mail after a few minutes? Look in your spam folder, or</p>
      <button type="submit" class="secondary">Send the link again</button>
    </form>`;

/** The sign-in form, with a problem above it (wrong password, locked) and news (verified, reset). */
export function signInForm(
  ctx: PageContext,
  values: Record<string, string> = {},
  errors: FieldErrors = {},
  message?: { text: string; kind: "status" | "alert" },
): Html {
  return html`${notice(message?.text, message?.kind)}
    <form method="post" action="/sign-in" novalidate>
      ${csrfField(ctx)}
      ${field({ name: "email", label: "Email", type: "email", value: values.email, error: errors.email, autocomplete: "username" })}
      ${field({ name: "password", label: "Password", type: "password", error: errors.password, autocomplete: "current-password" })}
      <button type="submit">Sign in</button>
    </form>
    <p><a href="/reset">Forgot your password?</a> · New here? <a href="/sign-up">Sign up</a>.</p>
    ${passkeySignIn(ctx)}`;
}

/** The page a mailed link opens: one button that does what the link is for (a link alone changes nothing). */
export function confirmLink(ctx: PageContext, action: string, token: string, text: string, button: string): Html {
  return html`<p>${text}</p>
    <form method="post" action="${action}">
      ${csrfField(ctx)}<input type="hidden" name="token" value="${token}" />
      <button type="submit">${button}</button>
    </form>`;
}

/** A mailed link that is unknown, used or expired. */
export const deadLink = html`<p role="alert">This link has expired or has been used already.</p>
  <p><a href="/sign-in">Sign in</a> to get a new one, or <a href="/reset">reset your password</a>.</p>`;

/** Asks for the address to send a reset link to. */
export function resetRequestForm(
  ctx: PageContext,
  values: Record<string, string> = {},
  errors: FieldErrors = {},
): Html {
  return html`<p>We will mail you a link to choose a new password.</p>
    <form method="post" action="/reset" novalidate>
      ${csrfField(ctx)}
      ${field({ name: "email", label: "Email", type: "email", value: values.email, error: errors.email, autocomplete: "email" })}
      <button type="submit">Send the link</button>
    </form>`;
}

/** The new-password form a reset link opens, for the account of `email` (its password manager's username). */
export function resetForm(ctx: PageContext, token: string, email: string, errors: FieldErrors = {}): Html {
  return html`<form method="post" action="/reset/confirm" novalidate>
    ${csrfField(ctx)}<input type="hidden" name="token" value="${token}" />${usernameField(email)}
    ${field({ name: "password", label: "New password", type: "password", error: errors.password, autocomplete: "new-password", hint: "At least 12 characters. Every session of the account is signed out." })}
    <button type="submit">Set the password</button>
  </form>`;
}
