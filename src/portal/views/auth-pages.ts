// The pages of signing up, verifying an email, signing in and resetting a password.
import { html } from "hono/html";
import type { FieldErrors } from "../forms.ts";
import { csrfField, field, notice } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";

/** The sign-up form. */
export function signUpForm(ctx: PageContext, values: Record<string, string> = {}, errors: FieldErrors = {}): Html {
  return html`<p>Make an account to get API keys for the flash-sale API.</p>
    <form method="post" action="/sign-up" novalidate>
      ${csrfField(ctx)}
      ${field({ name: "partner", label: "Partner name", value: values.partner, error: errors.partner, autocomplete: "organization", hint: "Your company or project, as we should call it." })}
      ${field({ name: "email", label: "Email", type: "email", value: values.email, error: errors.email, autocomplete: "email" })}
      ${field({ name: "password", label: "Password", type: "password", error: errors.password, autocomplete: "new-password", hint: "At least 12 characters." })}
      <button type="submit">Sign up</button>
    </form>
    <p>Have an account? <a href="/sign-in">Sign in</a>.</p>`;
}

/** After sign-up or a reset request: the same words whether or not the address has an account. */
export const checkMail = (what: string) =>
  html`<p role="status">${what} Check your mail for the link (it may take a minute); it works once.</p>`;

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
    <p><a href="/reset">Forgot your password?</a> · New here? <a href="/sign-up">Sign up</a>.</p>`;
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

/** The new-password form a reset link opens. */
export function resetForm(ctx: PageContext, token: string, errors: FieldErrors = {}): Html {
  return html`<form method="post" action="/reset/confirm" novalidate>
    ${csrfField(ctx)}<input type="hidden" name="token" value="${token}" />
    ${field({ name: "password", label: "New password", type: "password", error: errors.password, autocomplete: "new-password", hint: "At least 12 characters. Every session of the account is signed out." })}
    <button type="submit">Set the password</button>
  </form>`;
}
