// The webhooks pages: an organisation's endpoints and the form that adds one, and an endpoint's page (a new secret on
// it once, its settings, rotation, disable/enable, test event, delete, replay, and its delivery log).
// Owners and developers see the forms; viewers see the same pages without them.
import { html } from "hono/html";
import type { FieldErrors } from "../forms.ts";
import type { AttemptLine, DeliveryLine } from "../webhooks/attempts.ts";
import { EVENT_TYPES } from "../webhooks/endpoints.ts";
import type { Endpoint } from "../webhooks/endpoints.ts";
import type { SecretReveal } from "../webhooks/secret-reveals.ts";
import { RETRY_SCHEDULE_TEXT } from "../webhooks/schedule.ts";
import { csrfField, field, notice, when } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";

/** What the list page's form was sent with, and what was wrong. */
export interface EndpointForm {
  values?: { url?: string; stores?: string; affid?: string; types?: string[] };
  errors?: FieldErrors;
  message?: string;
}

const filters = (e: Endpoint) =>
  html`${e.types.length ? e.types.join(", ") : "every event type"};
  ${e.stores.length ? `stores ${e.stores.join(", ")}` : "every store"}${e.affid ? html`; affid <code>${e.affid}</code>` : ""}`;

const statusText = (e: Endpoint) => (e.enabled ? "enabled" : `disabled: ${e.disabledReason}`);

function endpointItem(e: Endpoint): Html {
  return html`<li>
    <h3>${e.url}</h3>
    <dl>
      <dt>Sends</dt>
      <dd>${filters(e)}</dd>
      <dt>Status</dt>
      <dd class="${e.enabled ? "" : "status-suspended"}">${statusText(e)}</dd>
      <dt>Added</dt>
      <dd>${when(e.created)} by ${e.createdBy}</dd>
    </dl>
    <div class="actions">
      <a class="button secondary" href="/webhooks/${e.id}" aria-label="Settings and delivery log of ${e.url}"
        >Settings and log</a
      >
    </div>
  </li>`;
}

/** The checkboxes of the event types (all ticked on a new form). */
function typeChoices(checked: readonly string[] | undefined, error: string | undefined): Html {
  return html`<fieldset>
    <legend>Event types</legend>
    <p class="hint">None ticked: every type.</p>
    ${EVENT_TYPES.map(
      (t) =>
        html`<label
          ><input type="checkbox" name="${t}" value="on" ${!checked || checked.includes(t) ? "checked" : ""} />
          <code>${t}</code></label
        >`,
    )}
    ${error ? html`<p class="error">${error}</p>` : ""}
  </fieldset>`;
}

/** The list of endpoints, with the form that adds one for those who may (`manage`); `ready`: webhooks are set up. */
export function endpointsPage(
  ctx: PageContext,
  endpoints: Endpoint[],
  manage: boolean,
  ready: boolean,
  form: EndpointForm = {},
): Html {
  const v = form.values ?? {};
  const adding = !ready
    ? html`<p class="notice alert" role="alert">
        Webhooks are not set up on this portal (its operator sets PORTAL_SECRET_KEY and WEBHOOKS_API_KEY).
      </p>`
    : manage
      ? html`<h2>Add an endpoint</h2>
          <form method="post" action="/webhooks" novalidate>
            ${csrfField(ctx)}
            ${field({ name: "url", label: "URL", inputmode: "url", autocomplete: "url", value: v.url, error: form.errors?.url, hint: "Where we POST each event: an https URL on a public address." })}
            ${typeChoices(v.types, form.errors?.types)}
            ${field({ name: "stores", label: "Stores", value: v.stores, error: form.errors?.stores, optional: true, hint: "Store keys, separated by spaces or commas; empty: every store." })}
            ${field({ name: "affid", label: "Affiliate ID (affid)", value: v.affid, error: form.errors?.affid, optional: true, hint: "Added to each sale's page link, as the API's affid parameter does; empty: none." })}
            <button type="submit">Add endpoint</button>
          </form>`
      : "";
  return html`${notice(form.message)}
    <p>
      Each sale event of the API's <a href="${ctx.apiUrl}/docs">event stream</a> POSTed to your endpoints, signed to the
      Standard Webhooks scheme, and retried while an endpoint does not answer 2xx (${RETRY_SCHEDULE_TEXT}).
    </p>
    ${adding}
    <h2>Endpoints</h2>
    ${
      endpoints.length
        ? html`<ul class="key">
            ${endpoints.map(endpointItem)}
          </ul>`
        : html`<p>No endpoints yet.</p>`
    }`;
}

/** A new secret, shown this once (a reload of the page shows it no more). */
function secretShown(endpoint: Endpoint, reveal: SecretReveal): Html {
  return html`<p role="status">${reveal.intro}</p>
    <p><strong>Copy it now: this is the only time it is shown.</strong> We keep it sealed, to sign deliveries with.</p>
    <div class="field">
      <label for="new-secret">The signing secret of ${endpoint.url}</label>
      <input id="new-secret" class="secret" type="text" readonly value="${reveal.secret}" />
    </div>
    <p><button type="button" data-copy="new-secret" hidden>Copy the secret</button></p>`;
}

/** The endpoint's settings and the forms that change it. */
function endpointActions(ctx: PageContext, e: Endpoint, now: number): Html {
  const overlap = (value: string, text: string, checked = false) =>
    html`<label><input type="radio" name="grace" value="${value}" ${checked ? "checked" : ""} /> ${text}</label>`;
  const post = (path: string, label: string, kind = "secondary") =>
    html`<form method="post" action="/webhooks/${e.id}/${path}" class="inline">
      ${csrfField(ctx)}<button type="submit" class="${kind}">${label}</button>
    </form>`;
  return html`<h2>Actions</h2>
    <div class="actions">
      ${post("test", "Send a test event")} ${e.enabled ? post("disable", "Disable") : post("enable", "Enable")}
      <a class="button secondary" href="/webhooks/${e.id}/delete">Delete</a>
    </div>
    <h2>Rotate the secret</h2>
    ${
      e.previous && e.previousUntil > now
        ? html`<p>The previous secret signs too until ${when(e.previousUntil)}; a rotation now ends that.</p>`
        : ""
    }
    <form method="post" action="/webhooks/${e.id}/rotate">
      ${csrfField(ctx)}
      <fieldset>
        <legend>The current secret keeps signing (a second signature) for</legend>
        ${overlap("now", "No time: stop now")} ${overlap("1h", "1 hour")} ${overlap("24h", "24 hours", true)}
        ${overlap("7d", "7 days")}
      </fieldset>
      <button type="submit">Rotate the secret</button>
    </form>
    <h2>Replay events</h2>
    <form method="post" action="/webhooks/${e.id}/replay">
      ${csrfField(ctx)}
      ${field({ name: "from", label: "From (UTC)", type: "datetime-local", hint: "The events whose instant is in this range, sent again (with their IDs)." })}
      ${field({ name: "to", label: "To (UTC)", type: "datetime-local" })}
      <button type="submit">Replay</button>
    </form>`;
}

const stateText = (d: DeliveryLine) =>
  d.state === "pending" ? html`pending, next attempt ${when(d.nextAt)}` : d.state;

/** A form that makes a delivery due now (not one delivered). */
const retryButton = (ctx: PageContext, e: Endpoint, d: DeliveryLine) =>
  d.state === "delivered"
    ? ""
    : html`<form method="post" action="/webhooks/${e.id}/deliveries/${d.id}/retry" class="inline">
        ${csrfField(ctx)}<button type="submit" class="secondary" aria-label="Retry now: ${d.eventId}">Retry now</button>
      </form>`;

/** A log under `caption`: one column a heading, one row a line (the trail's table style). */
const logTable = (caption: string, headings: readonly string[], rows: Html[]) =>
  html`<table class="audit">
    <caption class="hint">
      ${caption}
    </caption>
    <thead>
      <tr>
        ${headings.map((h) => html`<th scope="col">${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;

function deliveriesTable(ctx: PageContext, e: Endpoint, deliveries: DeliveryLine[], manage: boolean): Html {
  if (!deliveries.length) return html`<p>No deliveries yet.</p>`;
  const rows = deliveries.map(
    (d) =>
      html`<tr>
        <td><code>${d.type}</code> <span class="detail">${d.eventId}</span></td>
        <td>${d.attempts}</td>
        <td>${stateText(d)} ${manage ? retryButton(ctx, e, d) : ""}</td>
      </tr>`,
  );
  return logTable("The latest deliveries, newest first", ["Event", "Attempts", "State"], rows);
}

function attemptsTable(attempts: AttemptLine[]): Html {
  if (!attempts.length) return html`<p>No attempts yet.</p>`;
  const rows = attempts.map(
    (a) =>
      html`<tr>
        <td>${when(a.at)}</td>
        <td><code>${a.type}</code></td>
        <td>${a.status || "none"}</td>
        <td>${a.latencyMs} ms</td>
        <td class="detail"><code>${a.answer.slice(0, 200)}</code></td>
      </tr>`,
  );
  const headings = ["When", "Event", "Status", "Time", "Answer (first bytes)"];
  return logTable("The latest attempts, newest first", headings, rows);
}

/** An endpoint's page: a new secret (this once), settings, actions for those who may, and the delivery log. */
export function endpointPage(
  ctx: PageContext,
  e: Endpoint,
  log: { deliveries: DeliveryLine[]; attempts: AttemptLine[] },
  manage: boolean,
  now: number,
  message?: string,
  reveal?: SecretReveal,
): Html {
  return html`${notice(message)} ${reveal ? secretShown(e, reveal) : ""}
    <dl class="key">
      <dt>URL</dt>
      <dd><code>${e.url}</code></dd>
      <dt>Sends</dt>
      <dd>${filters(e)}</dd>
      <dt>Status</dt>
      <dd>${statusText(e)}</dd>
      <dt>Added</dt>
      <dd>${when(e.created)} by ${e.createdBy}</dd>
    </dl>
    ${manage ? endpointActions(ctx, e, now) : ""}
    <h2>Deliveries</h2>
    ${deliveriesTable(ctx, e, log.deliveries, manage)}
    <h2>Attempts</h2>
    ${attemptsTable(log.attempts)}
    <p><a href="/webhooks">All endpoints</a></p>`;
}

/** Asks before deleting. */
export function deleteForm(ctx: PageContext, e: Endpoint): Html {
  return html`<p>
      Delete the endpoint <strong>${e.url}</strong>? Its deliveries and their log go with it, and nothing more is sent
      to it. This cannot be undone.
    </p>
    <form method="post" action="/webhooks/${e.id}/delete">
      ${csrfField(ctx)}
      <div class="actions">
        <button type="submit" class="danger">Delete the endpoint</button>
        <a class="button secondary" href="/webhooks/${e.id}">Cancel</a>
      </div>
    </form>`;
}
