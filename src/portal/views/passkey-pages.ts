// The passkey parts of the portal's pages: the form a passkey ceremony is sent in (shown by passkeys.js, which needs
// JavaScript: without it the page says so, and the rest of the page works), the account's list of passkeys with
// rename and remove, the form that starts adding one, and the page that makes it.
import { html } from "hono/html";
import type { FieldErrors } from "../forms.ts";
import { csrfField, field, usernameField, when } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";

/** A passkey as its list shows it. */
export interface PasskeyRow {
  id: string;
  name: string;
  created: number;
  lastUsed: number | null;
}

/** The browser side: @simplewebauthn/browser's bundle and our script, from the portal itself. */
const scripts = html`<script src="/static/webauthn.js" defer></script>
  <script src="/static/passkeys.js" defer></script>`;

/**
 * The form passkeys.js sends a ceremony's result in (field `response`), hidden until the script finds WebAuthn; its
 * options are on it (`options`, made with the page) or asked of `optionsUrl` when the button is pressed. `noScript`
 * is what the page says without JavaScript (the script hides it, or says the browser cannot use passkeys).
 */
function passkeyForm(
  ctx: PageContext,
  f: {
    action: string;
    button: string;
    noScript: string;
    options?: unknown;
    optionsUrl?: string;
    fields?: Html;
    /** The page's main action (else a secondary button, beside a form of a password or a code). */
    primary?: boolean;
  },
): Html {
  return html`<p class="notice" data-passkey-note>${f.noScript}</p>
    <form
      method="post"
      action="${f.action}"
      data-passkey
      ${f.options ? html`data-options="${JSON.stringify(f.options)}"` : ""}
      ${f.optionsUrl ? html`data-options-url="${f.optionsUrl}"` : ""}
      hidden
    >
      ${csrfField(ctx)}${f.fields ?? ""}<input type="hidden" name="response" value="" />
      <button type="submit" ${f.primary ? "" : html`class="secondary"`}>${f.button}</button>
      <p class="error" data-passkey-message aria-live="polite"></p>
    </form>
    ${scripts}`;
}

/** The sign-in page's passkey part: a passkey alone signs in (it stands for both factors). */
export const passkeySignIn = (ctx: PageContext) =>
  html`<h2>Or use a passkey</h2>
    <p>A passkey saved on this device, your phone or a security key signs you in without your password.</p>
    ${passkeyForm(ctx, {
      action: "/sign-in/passkey",
      optionsUrl: "/sign-in/passkey/options",
      button: "Sign in with a passkey",
      noScript: "Signing in with a passkey needs JavaScript, which is off in this browser: use your password.",
    })}`;

/** The code step's passkey part, for an account with a passkey: beside the app's code, or first when it has none. */
export const passkeySecondStep = (ctx: PageContext, first: boolean) =>
  html`${first ? "" : html`<h2>Or use a passkey</h2>`}
  ${passkeyForm(ctx, {
    action: "/sign-in/passkey",
    optionsUrl: "/sign-in/passkey/options",
    button: "Use a passkey",
    primary: first,
    noScript: "Using a passkey needs JavaScript, which is off in this browser: enter a code instead.",
  })}`;

/** What the passkeys section shows of a form sent back: which form, and its problems. */
export interface PasskeyForms {
  form?: string;
  errors?: FieldErrors;
}

/** The account's passkeys: each with its use, rename and remove (the password again); and adding one. */
export function passkeysSection(ctx: PageContext, keys: PasskeyRow[], sent: PasskeyForms, totpOn: boolean): Html {
  const errors = (form: string) => (sent.form === form ? (sent.errors ?? {}) : {});
  const add = errors("passkey-add");
  const list = keys.map((k, i) => {
    const [rename, remove] = [errors(`rename:${k.id}`), errors(`remove:${k.id}`)];
    const open = sent.form === `rename:${k.id}` || sent.form === `remove:${k.id}`;
    return html`<li>
      <h3>${k.name}</h3>
      <dl>
        <dt>Added</dt>
        <dd>${when(k.created)}</dd>
        <dt>Last used</dt>
        <dd>${k.lastUsed === null ? "Never" : when(k.lastUsed)}</dd>
      </dl>
      <details ${open ? "open" : ""}>
        <summary>Rename or remove “${k.name}”</summary>
        <form method="post" action="/account/two-factor/passkeys/${k.id}/rename" novalidate>
          ${csrfField(ctx)}
          ${field({ name: "name", id: `rename-${i}`, label: "New name", value: k.name, error: rename.name })}
          <button type="submit" class="secondary">Rename</button>
        </form>
        <form method="post" action="/account/two-factor/passkeys/${k.id}/remove" novalidate>
          ${csrfField(ctx)}${usernameField(ctx.account?.email ?? "")}
          ${!totpOn && keys.length === 1 ? html`<p>This is your only second factor: removing it turns two-factor sign-in off, and your recovery codes stop working.</p>` : ""}
          ${field({ name: "current", id: `remove-${i}`, label: "Current password", type: "password", error: remove.current, autocomplete: "current-password" })}
          <button type="submit" class="danger">Remove this passkey</button>
        </form>
      </details>
    </li>`;
  });
  return html`<h2>Passkeys</h2>
    <p>
      A passkey is kept by this device, your phone or a security key, and unlocked with its PIN, fingerprint or face. It
      is a second factor after your password, and signs in alone where the browser can check it is you.
    </p>
    ${
      keys.length
        ? html`<ul class="key">
            ${list}
          </ul>`
        : html`<p>You have no passkey yet.</p>`
    }
    <h3>Add a passkey</h3>
    <form method="post" action="/account/two-factor/passkeys/new" novalidate>
      ${csrfField(ctx)}${usernameField(ctx.account?.email ?? "")}
      ${field({ name: "name", id: "add-name", label: "Passkey name", error: add.name, hint: "So that you can tell your passkeys apart: “Work laptop”, “Phone”." })}
      ${field({ name: "current", id: "add-current", label: "Current password", type: "password", error: add.current, autocomplete: "current-password" })}
      <p>The next step needs JavaScript: the browser makes the passkey.</p>
      <button type="submit">Add a passkey</button>
    </form>`;
}

/** The page that makes the passkey `name` (after the password was confirmed): `options` for the browser. */
export function createPasskeyPage(ctx: PageContext, name: string, options: unknown): Html {
  return html`<p>
      Press the button: your browser asks where to keep the passkey “${name}” (this device, your phone or a security
      key) and may ask for its PIN, fingerprint or face.
    </p>
    ${passkeyForm(ctx, {
      action: "/account/two-factor/passkeys",
      options,
      button: "Create the passkey",
      primary: true,
      fields: html`<input type="hidden" name="name" value="${name}" />`,
      noScript:
        "Making a passkey needs JavaScript, which is off in this browser: turn it on and start again from two-factor sign-in.",
    })}
    <p><a href="/account/two-factor">Not now: back to two-factor sign-in</a></p>`;
}
