// The portal's page frame and form pieces, as Hono's html templates (every interpolated value is escaped).
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** What every page knows: who is signed in (if anyone), the form token, the API's URL. */
export interface PageContext {
  /** `role`: in the organisation the session acts for (null: none). */
  account: { email: string; partner: string; operator: boolean; role: "owner" | "developer" | "viewer" | null } | null;
  csrf: string;
  apiUrl: string;
}

/** The hidden field that carries the CSRF token in every form. */
export const csrfField = (ctx: PageContext) => html`<input type="hidden" name="_csrf" value="${ctx.csrf}" />`;

/**
 * A whole page: a link that skips to its content, navigation for who is signed in (the API's reference among it), the
 * title as the heading, `body` under it.
 */
export function page(ctx: PageContext, title: string, body: Html): Html {
  const nav = ctx.account
    ? html`<nav aria-label="Portal">
        ${ctx.account.role === "owner" || ctx.account.role === "developer" ? html`<a href="/keys">API keys</a>` : ""}
        ${ctx.account.role ? html`<a href="/usage">Usage</a>` : ""}
        ${ctx.account.role ? html`<a href="/webhooks">Webhooks</a>` : ""}
        <a href="/console">Console</a>
        ${ctx.account.role ? html`<a href="/team">Team</a>` : ""}
        <a href="/account">Account</a>
        ${ctx.account.operator ? html`<a href="/admin/accounts">Operator</a>` : ""}
        <a href="${ctx.apiUrl}/docs">API docs</a>
        <form method="post" action="/sign-out" class="inline">
          ${csrfField(ctx)}<button type="submit" class="link">Sign out</button>
        </form>
      </nav>`
    : html`<nav aria-label="Portal">
        <a href="/sign-in">Sign in</a>
        <a href="/sign-up">Sign up</a>
        <a href="${ctx.apiUrl}/docs">API docs</a>
      </nav>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Developer portal</title>
        <link rel="icon" href="/favicon.ico" sizes="32x32" />
        <link rel="stylesheet" href="/static/portal.css" />
        <script src="/static/portal.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to the content</a>
        <header>
          <a class="brand" href="/">Developer portal</a>
          ${nav}
        </header>
        <main id="main" tabindex="-1">
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`;
}

/** One labelled input; `error` is shown under it and tied to it for screen readers. */
export function field(f: {
  name: string;
  /** Makes the element IDs unique when one page has several forms with this field (default: the name). */
  id?: string;
  label: string;
  type?: string;
  value?: string;
  error?: string | undefined;
  autocomplete?: string;
  hint?: string;
  /** `decimal` or `numeric`: the keyboard a phone shows. */
  inputmode?: string;
  /** The field may be left empty (it is `required` otherwise). */
  optional?: boolean;
}): Html {
  const id = `f-${f.id ?? f.name}`;
  const [hintId, errorId] = [`h-${f.id ?? f.name}`, `e-${f.id ?? f.name}`];
  const described = [f.hint ? hintId : "", f.error ? errorId : ""].filter(Boolean).join(" ");
  return html`<div class="field">
    <label for="${id}">${f.label}</label>
    ${f.hint ? html`<p class="hint" id="${hintId}">${f.hint}</p>` : ""}
    <input
      id="${id}"
      name="${f.name}"
      type="${f.type ?? "text"}"
      value="${f.value ?? ""}"
      ${f.autocomplete ? html`autocomplete="${f.autocomplete}"` : ""}
      ${f.inputmode ? html`inputmode="${f.inputmode}"` : ""}
      ${described ? html`aria-describedby="${described}"` : ""}
      ${f.error ? html`aria-invalid="true"` : ""}
      ${f.optional ? "" : "required"}
    />
    ${f.error ? html`<p class="error" id="${errorId}">${f.error}</p>` : ""}
  </div>`;
}

/**
 * The problems of a form that was sent back, above it: each a link to its field. It takes the focus as the page loads
 * (portal.js), so that a screen reader reads it first; without script it is still the first thing in the form.
 * `labels` names the fields (field name -> label), in the form's order.
 */
export function errorSummary(errors: Partial<Record<string, string>>, labels: Record<string, string>): Html {
  const wrong = Object.keys(labels).filter((name) => errors[name]);
  if (!wrong.length) return html``;
  return html`<div
    class="error-summary"
    id="error-summary"
    tabindex="-1"
    data-focus
    aria-labelledby="error-summary-title"
  >
    <h2 id="error-summary-title">There ${wrong.length === 1 ? "is a problem" : `are ${wrong.length} problems`}</h2>
    <ul>
      ${wrong.map((name) => html`<li><a href="#f-${name}" data-field="f-${name}">${labels[name]}: ${errors[name]}</a></li>`)}
    </ul>
  </div>`;
}

/**
 * The account's address as a password manager's username, on a form that changes or sets a password but shows no
 * address of its own: hidden, never sent to be read (no name).
 */
export const usernameField = (email: string) =>
  html`<input type="email" autocomplete="username" value="${email}" hidden readonly />`;

/** A notice at the top of a page (`status` for news, `alert` for a problem). */
export const notice = (text: string | undefined, kind: "status" | "alert" = "status") =>
  text ? html`<p class="notice ${kind}" role="${kind}">${text}</p>` : "";

/** A time as UTC, to the minute (the title attribute holds the exact instant). */
export const when = (ms: number | string) => {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace("T", " ")} UTC</time>`;
};
