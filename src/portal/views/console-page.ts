// The console's page: the choice of an operation, its parameters as a form made from the OpenAPI document, the key
// (never sent to the portal: its field has no name), and the region the script (/static/console.js) shows the API's
// answer in. Without script the form prepares the request and the page shows a form that sends it to the API.
import { html } from "hono/html";
import type { ConsoleOperation, ConsoleParameter } from "../console-operations.ts";
import type { Html } from "./layout.ts";

/** One of the signed-in partner's live keys, by what the portal keeps of it (a key is shown once, never stored). */
export interface KeyName {
  label: string;
  first4: string;
  last4: string;
}

/** What the page shows. */
export interface ConsoleView {
  operations: readonly ConsoleOperation[];
  /** The operation whose form is shown (none: the choice only). */
  chosen: ConsoleOperation | undefined;
  /** The values the form was sent with (its query string), to fill it in again. */
  values: Readonly<Record<string, readonly string[]>>;
  /** The API's base URL, no trailing slash. */
  apiUrl: string;
  /** The signed-in partner's live keys; null when no one is signed in. */
  keys: readonly KeyName[] | null;
  /** The request prepared for sending without script (the form was sent with `prepare`). */
  prepared: Prepared | undefined;
  /** A problem to say above the form (an unknown operation). */
  problem?: string;
}

/** A request ready to send: the API URL of its path, and its query (the key aside). */
export interface Prepared {
  action: string;
  query: readonly (readonly [string, string])[];
  /** Required parameters left empty: nothing to send until they are given. */
  missing: readonly string[];
}

/** Markdown's `code` spans as <code>, the rest as text (escaped). */
function withCode(text: string): Html {
  return text
    .split("`")
    .map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : html`${part}`))
    .reduce((all, part) => html`${all}${part}`, html``);
}

/** The first paragraph of a description (the reference page has the rest). */
const firstParagraph = (text: string) => text.split(/\n\s*\n|\n(?=\|)/)[0]!.trim();

/** A parameter's hint: its description, its range and default. */
function hintOf(p: ConsoleParameter): Html {
  const range =
    p.minimum !== undefined && p.maximum !== undefined
      ? ` From ${p.minimum} to ${p.maximum}.`
      : p.minimum !== undefined
        ? ` At least ${p.minimum}.`
        : "";
  const fallback = p.default !== undefined ? ` Default ${p.default}.` : "";
  const example = p.example !== undefined && p.kind !== "choice" ? ` Example: ${p.example}.` : "";
  return html`${withCode(firstParagraph(p.description))}${range}${fallback}${example}`;
}

const requiredMark = (p: ConsoleParameter) => (p.required ? html` <span class="required">(required)</span>` : "");

/** One field of the form: a select for a choice, checkboxes for a repeatable choice, inputs for text. */
function parameterField(p: ConsoleParameter, values: readonly string[]): Html {
  const id = `${p.in}-${p.name}`;
  const hintId = `h-${id}`;
  const data = html`data-in="${p.in}"`;
  if (p.kind === "choice" && p.repeatable) {
    return html`<fieldset class="values" aria-describedby="${hintId}">
      <legend><code>${p.name}</code>${requiredMark(p)}</legend>
      <p class="hint" id="${hintId}">${hintOf(p)}</p>
      <div class="choices">
        ${p.values.map(
          (v) =>
            html`<label
              ><input type="checkbox" name="${p.name}" value="${v}" ${data} ${values.includes(v) ? "checked" : ""} />
              ${v}</label
            >`,
        )}
      </div>
    </fieldset>`;
  }
  if (p.repeatable) {
    const shown = values.length > 0 ? values : [""];
    return html`<fieldset class="values" aria-describedby="${hintId}" data-repeat="${p.name}">
      <legend><code>${p.name}</code>${requiredMark(p)}</legend>
      <p class="hint" id="${hintId}">${hintOf(p)} Each value is sent as its own <code>${p.name}=</code>.</p>
      ${shown.map(
        (v, i) =>
          html`<div class="field">
            <label for="${id}-${i + 1}">${p.name}, value ${i + 1}</label>
            <input id="${id}-${i + 1}" type="text" name="${p.name}" value="${v}" ${data} />
          </div>`,
      )}
      <button type="button" class="secondary" data-add="${p.name}" hidden>Add a value of ${p.name}</button>
    </fieldset>`;
  }
  const value = values[0] ?? "";
  const label = html`<label for="${id}"><code>${p.name}</code>${requiredMark(p)}</label>
    <p class="hint" id="${hintId}">${hintOf(p)}</p>`;
  if (p.kind === "choice") {
    const unset = p.required
      ? ""
      : html`<option value="">${p.default !== undefined ? `Not sent (${p.default})` : "Not sent"}</option>`;
    return html`<div class="field">
      ${label}
      <select id="${id}" name="${p.name}" aria-describedby="${hintId}" ${data} ${p.required ? "required" : ""}>
        ${unset}${p.values.map((v) => html`<option value="${v}" ${v === value ? "selected" : ""}>${v}</option>`)}
      </select>
    </div>`;
  }
  return html`<div class="field">
    ${label}
    <input
      id="${id}"
      type="text"
      name="${p.name}"
      value="${value}"
      aria-describedby="${hintId}"
      ${p.kind === "integer" ? html`inputmode="numeric" pattern="[0-9]*"` : ""}
      ${data}
      ${p.required ? "required" : ""}
    />
  </div>`;
}

/** The choice of an operation: a form to /console (it changes nothing, so it carries no CSRF token). */
function operationChoice(view: ConsoleView): Html {
  const tags = [...new Set(view.operations.map((o) => o.tag))];
  return html`<form method="get" action="/console" class="console-choice">
    <div class="field">
      <label for="f-op">Operation</label>
      <select id="f-op" name="op">
        ${tags.map(
          (tag) =>
            html`<optgroup label="${tag}">
              ${view.operations
                .filter((o) => o.tag === tag)
                .map(
                  (o) =>
                    html`<option value="${o.id}" ${o === view.chosen ? "selected" : ""}>
                      ${o.summary}: GET ${o.path}
                    </option>`,
                )}
            </optgroup>`,
        )}
      </select>
    </div>
    <button type="submit" class="secondary">Show its parameters</button>
  </form>`;
}

/** The key's fields, shown by the script only: without it the key is asked for with the prepared request. */
function keyFields(view: ConsoleView): Html {
  const names =
    view.keys === null
      ? ""
      : view.keys.length === 0
        ? html`<p class="hint">You have no live key: <a href="/keys">make one</a>, then paste it here.</p>`
        : html`<div class="field">
            <label for="console-key-name">Which of your keys</label>
            <p class="hint" id="h-console-key-name">
              The portal keeps only each key's first and last four characters: paste the whole key below. The console
              tells you when the key you paste is not the one you picked.
            </p>
            <select id="console-key-name" aria-describedby="h-console-key-name">
              <option value="">Not said</option>
              ${view.keys.map(
                (k) =>
                  html`<option data-first4="${k.first4}" data-last4="${k.last4}">
                    ${k.label} (${k.first4}…${k.last4})
                  </option>`,
              )}
            </select>
          </div>`;
  return html`<fieldset id="console-key-fields" data-script hidden>
    <legend>Your API key</legend>
    ${names}
    <div class="field">
      <label for="console-key">API key</label>
      <p class="hint" id="h-console-key">
        Goes from this browser straight to the API, never to this portal, and is not kept anywhere.
      </p>
      <input
        id="console-key"
        class="secret"
        type="password"
        autocomplete="off"
        autocapitalize="off"
        spellcheck="false"
        aria-describedby="h-console-key"
      />
    </div>
    <fieldset id="console-auth" disabled>
      <legend>Send the key in</legend>
      <label
        ><input type="radio" name="auth" value="x-api-key" checked />
        <span>the <code>X-Api-Key</code> header</span></label
      >
      <label
        ><input type="radio" name="auth" value="bearer" />
        <span>the <code>Authorization: Bearer</code> header</span></label
      >
      <label
        ><input type="radio" name="auth" value="query" />
        <span>the <code>apikey</code> query parameter (it is then in the URL)</span></label
      >
    </fieldset>
  </fieldset>`;
}

/** The chosen operation's form: to the portal without script (it prepares the request), sent by the script. */
function operationForm(view: ConsoleView, o: ConsoleOperation): Html {
  const inPath = o.parameters.filter((p) => p.in === "path");
  const inQuery = o.parameters.filter((p) => p.in === "query");
  const fields = (ps: ConsoleParameter[]) => ps.map((p) => parameterField(p, view.values[p.name] ?? []));
  return html`<section aria-labelledby="op-heading">
    <h2 id="op-heading"><code>GET ${o.path}</code></h2>
    <p>${o.summary}. ${withCode(firstParagraph(o.description))}</p>
    <p>The whole description and the answers' schemas are in the <a href="${view.apiUrl}/docs">API reference</a>.</p>
    <form
      id="console-form"
      method="get"
      action="/console"
      data-api="${view.apiUrl}"
      data-path="${o.path}"
      data-keyed="${o.keyed ? "1" : "0"}"
    >
      <input type="hidden" name="op" value="${o.id}" />
      <input type="hidden" name="prepare" value="1" />
      ${
        inPath.length > 0
          ? html`<fieldset>
              <legend>Path parameters</legend>
              ${fields(inPath)}
            </fieldset>`
          : ""
      }
      ${
        inQuery.length > 0
          ? html`<fieldset>
              <legend>Query parameters</legend>
              ${fields(inQuery)}
            </fieldset>`
          : ""
      }
      ${o.keyed ? keyFields(view) : html`<p>This operation takes no key.</p>`}
      <p class="notice" data-no-script>
        Sending from this page needs JavaScript. Without it, this button prepares the request: the page then shows its
        URL and a form that sends it to the API, with your key in the <code>apikey</code> query parameter (so the key is
        also in your browser's history).
      </p>
      <button type="submit" id="console-send">Prepare the request</button>
    </form>
  </section>`;
}

/** The request prepared without script: its URL, and a form to the API with the key as `apikey`. */
function preparedRequest(o: ConsoleOperation, prepared: Prepared): Html {
  if (prepared.missing.length > 0)
    return html`<section aria-labelledby="prepared-heading">
      <h2 id="prepared-heading">Request not prepared</h2>
      <p role="alert">Give ${prepared.missing.join(", ")}: the operation needs it.</p>
    </section>`;
  const url = new URL(prepared.action);
  for (const [name, value] of prepared.query) url.searchParams.append(name, value);
  return html`<section aria-labelledby="prepared-heading">
    <h2 id="prepared-heading">The prepared request</h2>
    <p><code class="url" id="prepared-url">GET ${url.href}</code></p>
    <form method="get" action="${prepared.action}">
      ${prepared.query.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
      ${
        o.keyed
          ? html`<div class="field">
              <label for="prepared-key">API key, sent as apikey</label>
              <p class="hint" id="h-prepared-key">
                Sent to the API only, as <code>apikey</code> in the URL: the API's answer replaces this page.
              </p>
              <input
                id="prepared-key"
                class="secret"
                type="password"
                name="apikey"
                autocomplete="off"
                autocapitalize="off"
                spellcheck="false"
                aria-describedby="h-prepared-key"
              />
            </div>`
          : ""
      }
      <button type="submit">Send it to the API</button>
    </form>
  </section>`;
}

/** Where the script shows the answer: the status (announced), the headers the browser may read, the body. */
const resultRegion = html`<section id="console-result" aria-labelledby="result-heading" data-script hidden>
  <h2 id="result-heading">Response</h2>
  <p id="console-status" role="status" aria-live="polite" aria-atomic="true">No request sent yet.</p>
  <div id="console-response" hidden>
    <p>Sent: <code id="console-request" class="url"></code></p>
    <p><button type="button" id="console-stop" class="secondary" hidden>Stop reading</button></p>
    <h3>Headers</h3>
    <p class="hint">
      A browser lets a page read only the headers the API lists in <code>Access-Control-Expose-Headers</code> (and a few
      safe ones).
    </p>
    <table id="console-headers">
      <thead>
        <tr>
          <th scope="col">Header</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody></tbody>
    </table>
    <h3>Body</h3>
    <pre id="console-body" tabindex="0"></pre>
  </div>
</section>`;

/** The console page's body. */
export function consolePage(view: ConsoleView): Html {
  const o = view.chosen;
  return html`<link rel="stylesheet" href="/static/console.css" />
    <script src="/static/console.js" defer></script>
    <p>
      Try a request: pick an operation of the API, fill in its parameters and send it with your key. Your browser sends
      it straight to the API at <code>${view.apiUrl}</code>.
    </p>
    ${view.problem ? html`<p class="notice alert" role="alert">${view.problem}</p>` : ""} ${operationChoice(view)}
    ${o ? operationForm(view, o) : ""} ${o && view.prepared ? preparedRequest(o, view.prepared) : ""}
    ${o ? resultRegion : ""}`;
}
