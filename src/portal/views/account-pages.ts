// The account page: change password, change email, a link to two-factor sign-in, delete the account, and the account's audit trail.
import { html } from "hono/html";
import { DEFAULT_KEY_RATE_LIMIT } from "../../config/defaults.ts";
import type { FieldErrors } from "../forms.ts";
import type { AuditEntry } from "../store/audit.ts";
import { auditTable } from "./audit-table.ts";
import { csrfField, field, notice, usernameField } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";

/** The API's own limits of a key, as the account page states them. */
const { rate, burst } = DEFAULT_KEY_RATE_LIMIT;

/** Which form an error or a message belongs to. */
export interface AccountForms {
  form?: "password" | "email" | "delete";
  errors?: FieldErrors;
  message?: string;
}

const errorsFor = (state: AccountForms, form: AccountForms["form"]): FieldErrors =>
  state.form === form ? (state.errors ?? {}) : {};

/** The whole account page. */
export function accountPage(ctx: PageContext, audit: AuditEntry[], state: AccountForms = {}): Html {
  const pw = errorsFor(state, "password");
  const em = errorsFor(state, "email");
  const del = errorsFor(state, "delete");
  // Each form asks for the password: its account's address, hidden, tells a password manager whose it is.
  const username = usernameField(ctx.account?.email ?? "");
  return html`${notice(state.message)}
    <p>
      Signed in as <strong>${ctx.account?.email}</strong> for <strong>${ctx.account?.partner}</strong>. The
      <a href="${ctx.apiUrl}/docs">API reference</a> describes every request.
    </p>
    <p>
      Each key may make ${rate} requests a second, in bursts of up to ${burst}, unless the operator gave it other
      limits: the <a href="/keys">API keys</a> page shows each key's. A request past them is answered 429 with
      <code>Retry-After</code>.
    </p>
    <h2>Change your password</h2>
    <form method="post" action="/account/password" novalidate>
      ${csrfField(ctx)}${username}
      ${field({ name: "current", label: "Current password", type: "password", error: pw.current, autocomplete: "current-password" })}
      ${field({ name: "password", label: "New password", type: "password", error: pw.password, autocomplete: "new-password", hint: "At least 12 characters. Your other sessions are signed out." })}
      <button type="submit">Change the password</button>
    </form>
    <h2>Change your email</h2>
    <form method="post" action="/account/email" novalidate>
      ${csrfField(ctx)}${username}
      ${field({ name: "email", label: "New email", type: "email", error: em.email, autocomplete: "email", hint: "We mail a link to the new address; the change is made when it is opened." })}
      ${field({ name: "current", label: "Current password", type: "password", error: em.current, autocomplete: "current-password" })}
      <button type="submit">Send the link</button>
    </form>
    <h2>Two-factor sign-in</h2>
    <p>
      A code from an authenticator app or a passkey after your password, with recovery codes for when they are lost:
      <a href="/account/two-factor">set up or change two-factor sign-in</a>.
    </p>
    <h2>Delete your account</h2>
    <form method="post" action="/account/delete" novalidate>
      ${csrfField(ctx)}${username}
      <p>
        Every key of the account is revoked first; then the account and its history are deleted. This cannot be undone.
      </p>
      ${field({ name: "confirm", label: 'Type "delete" to confirm', error: del.confirm, autocomplete: "off" })}
      ${field({ name: "current", label: "Current password", type: "password", error: del.current, autocomplete: "current-password" })}
      <button type="submit" class="danger">Delete the account</button>
    </form>
    <h2>Activity</h2>
    ${auditTable(audit, `The latest ${audit.length} events on this account, newest first`)}`;
}
