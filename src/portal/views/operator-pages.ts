// The operator pages: every account with its keys, one account (approve, suspend, reinstate, limits, its trail), the
// keys `npm run keys` made, and every account's trail.
import { html } from "hono/html";
import type { FieldErrors } from "../forms.ts";
import type { OperatorKey } from "../operator-keys.ts";
import type { PartnerKey } from "../partner-keys.ts";
import type { Account } from "../store/accounts.ts";
import type { AccountAuditEntry, AuditEntry } from "../store/audit.ts";
import { TRAFFIC_SPANS } from "../usage-reads.ts";
import type { KeyUse, TrafficSpan } from "../usage-reads.ts";
import type { Member, Membership } from "../store/organisations.ts";
import { auditTable } from "./audit-table.ts";
import { lastUseText, limitsText } from "./key-pages.ts";
import { csrfField, field, notice, when } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";

/**
 * Which form an error belongs to (`account` or a key's name in the keys file for limits, `suspend`), a message, and
 * the suspension's reason as typed (shown again with its errors).
 */
export interface OperatorForms {
  form?: string;
  errors?: FieldErrors;
  message?: string;
  reason?: string;
}

/** What suspending an account does, as the operator confirms it (the mail to the partner says the same). */
const SUSPENSION_EFFECTS =
  "its keys are refused by the API within 2 seconds (saying the account is suspended), its sessions end, it cannot sign in, and its partner is mailed the reason";

/**
 * Suspending an account: a reason (kept on its trail and mailed to the partner) and a box that confirms what it does;
 * nothing happens until both are given (no script needed).
 */
function suspendForm(ctx: PageContext, a: Account, state: OperatorForms): Html {
  const errors = state.form === "suspend" ? (state.errors ?? {}) : {};
  return html`<h2>Suspend the account</h2>
    <form method="post" action="/admin/accounts/${a.id}/suspend" novalidate>
      ${csrfField(ctx)}
      ${field({ name: "reason", id: "suspend-reason", label: "Reason", value: state.reason ?? "", error: errors.reason, autocomplete: "off", hint: "Mailed to the partner and kept in the account's activity." })}
      <div class="field">
        <label>
          <input
            type="checkbox"
            name="confirm"
            value="yes"
            required
            ${errors.confirm ? html`aria-invalid="true" aria-describedby="e-suspend-confirm"` : ""}
          />
          Suspend ${a.email}: ${SUSPENSION_EFFECTS}.
        </label>
        ${errors.confirm ? html`<p class="error" id="e-suspend-confirm">${errors.confirm}</p>` : ""}
      </div>
      <button type="submit" class="danger">Suspend the account</button>
    </form>`;
}

/** The approval: a note to the partner (optional, mailed with the approval and kept in the account's activity). */
const approveForm = (ctx: PageContext, a: Account): Html =>
  html`<form method="post" action="/admin/accounts/${a.id}/approve">
    ${csrfField(ctx)}
    ${field({ name: "reason", id: "approve-reason", label: "Note to the partner (optional)", value: "", autocomplete: "off", hint: "Mailed to the partner with the approval and kept in the account's activity." })}
    <button type="submit">Approve the account</button>
  </form>`;

const STATUS_TEXT = { active: "active", pending: "waiting for approval", suspended: "suspended" } as const;

const nav = html`<p class="actions">
  <a href="/admin/accounts">Accounts</a> <a href="/admin/operator-keys">Operator keys</a>
  <a href="/admin/audit">Activity of every account</a>
</p>`;

/** Previous and next links of a paged list (`path` may have a query already). */
const pager = (path: string, page: number, more: boolean) => {
  const at = (n: number) => `${path}${path.includes("?") ? "&" : "?"}page=${n}`;
  return page > 0 || more
    ? html`<p class="actions">
        ${page > 0 ? html`<a href="${at(page - 1)}">Previous page</a>` : ""}
        ${more ? html`<a href="${at(page + 1)}">Next page</a>` : ""}
      </p>`
    : "";
};

const keyLine = (k: PartnerKey) =>
  html`<li>
    ${k.label} <code>${k.first4}…${k.last4}</code> <span class="status-${k.status}">${k.status}</span>, ${limitsText(k)}
  </li>`;

/** How the accounts list is ordered: by email (`busiest` null) or busiest first; `span` is that of the figures shown. */
export interface AccountsOrder {
  busiest: TrafficSpan | null;
  span: TrafficSpan;
}

/** Every account (a page of them), each with its keys and the requests they made in the order's span. */
export function accountsPage(
  accounts: { account: Account; keys: PartnerKey[]; requests: number }[],
  page: { n: number; more: boolean },
  order: AccountsOrder,
  message?: string,
): Html {
  const orderLink = (busiest: TrafficSpan | null, text: string) => {
    const href = busiest ? `/admin/accounts?order=${busiest}` : "/admin/accounts";
    return busiest === order.busiest
      ? html`<a href="${href}" aria-current="page">${text}</a>`
      : html`<a href="${href}">${text}</a>`;
  };
  const short = TRAFFIC_SPANS[order.span].short;
  return html`${notice(message)} ${nav}
    <nav aria-label="Order of the accounts" class="spans">
      ${orderLink(null, "By email")} ${orderLink("24h", "Busiest, last 24 hours")}
      ${orderLink("30d", "Busiest, last 30 days")}
    </nav>
    <ul class="key">
      ${accounts.map(
        ({ account: a, keys, requests }) =>
          html`<li>
            <h2><a href="/admin/accounts/${a.id}">${a.email}</a></h2>
            <dl>
              <dt>Partner</dt>
              <dd>${a.partner}</dd>
              <dt>Status</dt>
              <dd class="status-${a.status}">${STATUS_TEXT[a.status]}${a.role === "admin" ? ", operator" : ""}</dd>
              <dt>Signed up</dt>
              <dd>${when(a.created)}${a.verified === null ? ", email not confirmed" : ""}</dd>
              <dt>Requests, ${short}</dt>
              <dd><a href="/admin/accounts/${a.id}/usage">${requests.toLocaleString("en")}</a></dd>
            </dl>
            ${
              keys.length
                ? html`<ul>
                    ${keys.map(keyLine)}
                  </ul>`
                : html`<p class="hint">No keys.</p>`
            }
          </li>`,
      )}
    </ul>
    ${accounts.length ? "" : html`<p>No accounts on this page.</p>`}
    ${pager(order.busiest ? `/admin/accounts?order=${order.busiest}` : "/admin/accounts", page.n, page.more)}`;
}

/** A form setting a rate and burst (or the API's defaults again), posted to `action`; `id` makes its fields unique. */
function limitsForm(ctx: PageContext, action: string, id: string, label: string, state: OperatorForms): Html {
  const errors = state.form === id ? (state.errors ?? {}) : {};
  return html`<form method="post" action="${action}" novalidate>
    ${csrfField(ctx)}
    ${field({ name: "rate", id: `${id}-rate`, label: `Rate for ${label} (requests a second)`, error: errors.rate, inputmode: "decimal", autocomplete: "off" })}
    ${field({ name: "burst", id: `${id}-burst`, label: `Burst for ${label}`, error: errors.burst, inputmode: "numeric", autocomplete: "off", optional: true, hint: "Requests at once; empty: 4 seconds of the rate." })}
    <div class="actions">
      <button type="submit" name="action" value="set">Set the limits</button>
      <button type="submit" name="action" value="default" class="secondary">Use the API's defaults</button>
    </div>
  </form>`;
}

/** One key with its own limits form (the operator's page of an account, and the operator keys). */
function keyItem(ctx: PageContext, name: string, label: string, details: Html, live: boolean, state: OperatorForms) {
  return html`<li>
    <h3>${label}</h3>
    <dl>${details}</dl>
    ${live ? limitsForm(ctx, `/admin/keys/${name}/limits`, `k-${name}`, `"${label}"`, state) : ""}
  </li>`;
}

/**
 * The account's organisation (its own, with its ID): its members and their roles; and the organisations the account is
 * a member of.
 */
function teamSection(a: Account, team: { members: Member[]; memberOf: Membership[] }): Html {
  return html`<h2>Its organisation's members</h2>
    ${
      team.members.length
        ? html`<table>
            <caption class="hint">
              The members of the organisation ${a.partner}
            </caption>
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
              </tr>
            </thead>
            <tbody>
              ${team.members.map(
                (m) =>
                  html`<tr>
                    <td class="who"><a href="/admin/accounts/${m.accountId}">${m.email}</a></td>
                    <td>${m.role}</td>
                    <td>${when(m.created)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : html`<p>It has no organisation of its own.</p>`
    }
    <h2>Organisations it is a member of</h2>
    ${
      team.memberOf.length
        ? html`<ul>
            ${team.memberOf.map((m) => html`<li><a href="/admin/accounts/${m.id}">${m.name}</a> as ${m.role}</li>`)}
          </ul>`
        : html`<p>None.</p>`
    }`;
}

/** One account: its state, the buttons that change it, its limits, its keys and its trail. */
export function operatorAccountPage(
  ctx: PageContext,
  a: Account,
  keys: PartnerKey[],
  use: Map<string, KeyUse>,
  audit: AuditEntry[],
  team: { members: Member[]; memberOf: Membership[] },
  state: OperatorForms = {},
): Html {
  const button = (what: string, text: string) =>
    html`<form method="post" action="/admin/accounts/${a.id}/${what}" class="inline">
      ${csrfField(ctx)}<button type="submit">${text}</button>
    </form>`;
  return html`${notice(state.message)} ${nav}
    <div class="key">
      <dl>
        <dt>Email</dt>
        <dd>${a.email}</dd>
        <dt>Partner</dt>
        <dd>${a.partner}</dd>
        <dt>Status</dt>
        <dd class="status-${a.status}">${STATUS_TEXT[a.status]}${a.role === "admin" ? ", operator" : ""}</dd>
        <dt>Limits of its keys</dt>
        <dd>
          ${limitsText({ ...(a.rate !== null ? { rate: a.rate } : {}), ...(a.burst !== null ? { burst: a.burst } : {}) })}
        </dd>
      </dl>
    </div>
    <div class="actions">
      ${a.status === "pending" ? approveForm(ctx, a) : ""}
      ${a.status === "suspended" ? button("reinstate", "Reinstate the account") : ""}
    </div>
    ${a.status === "active" ? suspendForm(ctx, a, state) : ""}
    <h2>Limits of every key of the account</h2>
    <p class="hint">Set on each of its keys now, and on the keys it makes later.</p>
    ${limitsForm(ctx, `/admin/accounts/${a.id}/limits`, "account", "every key", state)} ${teamSection(a, team)}
    <h2>Its keys</h2>
    <p><a href="/admin/accounts/${a.id}/usage">Usage of every key of the account</a></p>
    ${
      keys.length
        ? html`<ul class="key">
            ${keys.map((k) =>
              keyItem(
                ctx,
                `p.${a.id}.${k.id}`,
                k.label,
                html`<dt>Key</dt>
                  <dd><code>${k.first4}…${k.last4}</code></dd>
                  <dt>Status</dt>
                  <dd class="status-${k.status}">${k.status}</dd>
                  <dt>Made by</dt>
                  <dd>${k.createdBy ?? "a former member"}</dd>
                  <dt>Last used</dt>
                  <dd>${lastUseText(use.get(k.id))}</dd>
                  <dt>Usage</dt>
                  <dd><a href="/admin/accounts/${a.id}/keys/${k.id}/usage">Usage of ${k.label}</a></dd>
                  <dt>Limits</dt>
                  <dd>${limitsText(k)}</dd>`,
                k.status === "active" || k.status === "suspended",
                state,
              ),
            )}
          </ul>`
        : html`<p>No keys.</p>`
    }
    <h2>Activity</h2>
    ${auditTable(audit, `The latest ${audit.length} events on this account, newest first`)}`;
}

/** The keys no account owns: made with `npm run keys` on the keys file's machine. */
export function operatorKeysPage(ctx: PageContext, keys: OperatorKey[], state: OperatorForms = {}): Html {
  return html`${notice(state.message)} ${nav}
    <p>Keys made with <code>npm run keys</code>, by their name in the keys file.</p>
    <h2>Keys</h2>
    ${
      keys.length
        ? html`<ul class="key">
            ${keys.map((k) =>
              keyItem(
                ctx,
                k.name,
                k.name,
                html`<dt>Status</dt>
                  <dd class="status-${k.status}">${k.status}</dd>
                  <dt>Created</dt>
                  <dd>${when(k.created)}</dd>
                  ${
                    k.graceUntil
                      ? html`<dt>Old key until</dt>
                          <dd>${when(k.graceUntil)}</dd>`
                      : ""
                  }
                  <dt>Limits</dt>
                  <dd>${limitsText(k)}</dd>`,
                k.status === "active",
                state,
              ),
            )}
          </ul>`
        : html`<p>None.</p>`
    }`;
}

/** Every account's trail, newest first, a page at a time. */
export function auditPage(entries: AccountAuditEntry[], page: { n: number; more: boolean }): Html {
  return html`${nav} ${auditTable(entries, "Events of every account, newest first", true)}
  ${pager("/admin/audit", page.n, page.more)}`;
}
