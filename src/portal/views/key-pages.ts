// The API key dashboard: the list, the creation form, the page that shows a new key once, rotate and revoke.
import { html } from "hono/html";
import { DEFAULT_KEY_RATE_LIMIT } from "../../config/defaults.ts";
import type { FieldErrors } from "../forms.ts";
import type { PartnerKey } from "../partner-keys.ts";
import type { KeyUse } from "../usage-reads.ts";
import { csrfField, field, notice, when } from "./layout.ts";
import { snippets } from "./snippets.ts";
import type { Html, PageContext } from "./layout.ts";

/**
 * The limits the API enforces for a key, in words: its own rate and burst (a burst left out is 4 seconds of the rate,
 * as src/serve/admission/admission.ts makes it), or the API's defaults (DEFAULT_KEY_RATE_LIMIT).
 */
export function limitsText(key: { rate?: number; burst?: number }): string {
  if (key.rate === undefined)
    return `${DEFAULT_KEY_RATE_LIMIT.rate} requests a second, in bursts of up to ${DEFAULT_KEY_RATE_LIMIT.burst} (the API's default)`;
  const burst = key.burst ?? Math.max(1, Math.ceil(key.rate * 4));
  return `${key.rate} request${key.rate === 1 ? "" : "s"} a second, in bursts of up to ${burst}`;
}

/** When the key was last used, to the minute, and whether it is idle. */
export const lastUseText = (use: KeyUse | undefined) =>
  html`${use?.last ? when(use.last) : "never"}${
    use?.idle ? html` <strong class="idle">idle</strong> (not used for 30 days)` : ""
  }`;

function keyItem(key: PartnerKey, use: KeyUse | undefined): Html {
  const status =
    key.status === "active"
      ? key.graceUntil
        ? "active (the key it replaced works until the time below)"
        : "active"
      : key.status;
  return html`<li>
    <h3>${key.label}</h3>
    <dl>
      <dt>Key</dt>
      <dd><code>${key.first4}…${key.last4}</code></dd>
      <dt>Status</dt>
      <dd class="status-${key.status}">${status}</dd>
      <dt>Created</dt>
      <dd>${when(key.created)}</dd>
      <dt>Made by</dt>
      <dd>${key.createdBy ?? "a former member"}</dd>
      ${
        key.rotated
          ? html`<dt>Rotated</dt>
              <dd>${when(key.rotated)}</dd>`
          : ""
      }
      ${
        key.graceUntil
          ? html`<dt>Old key until</dt>
              <dd>${when(key.graceUntil)}</dd>`
          : ""
      }
      ${
        key.revoked
          ? html`<dt>Revoked</dt>
              <dd>${when(key.revoked)}</dd>`
          : ""
      }
      <dt>Last used</dt>
      <dd>${lastUseText(use)}</dd>
      <dt>Limits</dt>
      <dd>${limitsText(key)}</dd>
    </dl>
    <div class="actions">
      <a class="button secondary" href="/keys/${key.id}/usage" aria-label="Usage of ${key.label}">Usage</a>
      ${
        key.status === "active"
          ? html`<a class="button secondary" href="/keys/${key.id}/rotate" aria-label="Rotate ${key.label}">Rotate</a>
              <a class="button secondary" href="/keys/${key.id}/revoke" aria-label="Revoke ${key.label}">Revoke</a>`
          : ""
      }
    </div>
  </li>`;
}

/** The dashboard: create form, then every key of the account with its last use (`use`, by key ID). */
export function dashboard(
  ctx: PageContext,
  keys: PartnerKey[],
  use: Map<string, KeyUse>,
  limit: number,
  form: { values?: Record<string, string>; errors?: FieldErrors; message?: string } = {},
): Html {
  const live = keys.filter((k) => k.status === "active").length;
  return html`${notice(form.message)}
    <h2>New key</h2>
    <form method="post" action="/keys" novalidate>
      ${csrfField(ctx)}
      ${field({ name: "name", label: "Name", value: form.values?.name, error: form.errors?.name, hint: `What the key is for, such as "production site". You have ${live} of ${limit} keys.` })}
      <button type="submit">Create key</button>
    </form>
    <h2>Your keys</h2>
    ${
      keys.length
        ? html`<p><a href="/usage">Usage of all your keys</a>: requests per hour and per day, by status, and as CSV.</p>
            <ul class="key">
              ${keys.map((k) => keyItem(k, use.get(k.id)))}
            </ul>`
        : html`<p>No keys yet.</p>`
    }
    <h2>Calling the API</h2>
    ${snippets(ctx.apiUrl)}
    <p>The <a href="${ctx.apiUrl}/docs">API reference</a> describes every request.</p>`;
}

/** A new key, shown this once, with a copy button and requests with the key in them that work as printed. */
export function keyShown(ctx: PageContext, label: string, key: string, intro: string): Html {
  return html`<p role="status">${intro}</p>
    <p><strong>Copy it now: this is the only time it is shown.</strong> We keep only a hash of it.</p>
    <div class="field">
      <label for="new-key">The key "${label}"</label>
      <input id="new-key" class="secret" type="text" readonly value="${key}" />
    </div>
    <p><button type="button" data-copy="new-key" hidden>Copy the key</button></p>
    <h2>Try it</h2>
    ${snippets(ctx.apiUrl, key)}
    <p><a class="button" href="/keys">Back to your keys</a></p>`;
}

/** A reload of the new key's page: the key was shown once, and is not kept. */
export function keyAlreadyShown(label: string, shown: number): Html {
  return html`<p role="status">The key "${label}" was shown once, at ${when(shown)}, and cannot be shown again.</p>
    <p>We keep only a hash of it. If you did not copy it, rotate the key to get a new one.</p>
    <p><a class="button" href="/keys">Back to your keys</a></p>`;
}

/** Asks how long the old key should keep working (and says that a grace period still running ends now). */
export function rotateForm(ctx: PageContext, key: PartnerKey, error?: string): Html {
  const choice = (value: string, text: string, checked = false) =>
    html`<label><input type="radio" name="grace" value="${value}" ${checked ? "checked" : ""} /> ${text}</label>`;
  return html`<p>
      Rotating <strong>${key.label}</strong> (<code>${key.first4}…${key.last4}</code>) makes a new key. How long should
      the current one keep working, while you switch?
    </p>
    ${
      key.graceUntil
        ? html`<p class="notice alert" role="alert">
            The key it replaced last time still works until ${when(key.graceUntil)}: it is refused as soon as you rotate
            again (a key keeps at most one old key working).
          </p>`
        : ""
    }
    <form method="post" action="/keys/${key.id}/rotate">
      ${csrfField(ctx)}
      <fieldset>
        <legend>The current key keeps working</legend>
        ${choice("now", "Not at all: refuse it now")} ${choice("1h", "1 hour")} ${choice("24h", "24 hours", true)}
        ${choice("7d", "7 days")}
      </fieldset>
      ${error ? html`<p class="error">${error}</p>` : ""}
      <div class="actions">
        <button type="submit">Rotate the key</button> <a class="button secondary" href="/keys">Cancel</a>
      </div>
    </form>`;
}

/** Asks before revoking. */
export function revokeForm(ctx: PageContext, key: PartnerKey): Html {
  return html`<p>
      Revoke <strong>${key.label}</strong> (<code>${key.first4}…${key.last4}</code>)? The API refuses it within 2
      seconds, and any key it replaced too. This cannot be undone.
    </p>
    <form method="post" action="/keys/${key.id}/revoke">
      ${csrfField(ctx)}
      <div class="actions">
        <button type="submit" class="danger">Revoke the key</button> <a class="button secondary" href="/keys">Cancel</a>
      </div>
    </form>`;
}
