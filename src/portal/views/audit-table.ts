// The audit trail as a table: an account's own (the account page, the operator's page of it), or every account's.
import { html } from "hono/html";
import type { AccountAuditEntry, AuditEntry } from "../store/audit.ts";
import { when } from "./layout.ts";
import type { Html } from "./layout.ts";

/** The events, newest first, under `caption`; with `accounts`, a column says whose each event is. */
export function auditTable(entries: (AuditEntry | AccountAuditEntry)[], caption: string, accounts = false): Html {
  if (!entries.length) return html`<p>Nothing yet.</p>`;
  return html`<table>
    <caption class="hint">
      ${caption}
    </caption>
    <thead>
      <tr>
        <th scope="col">When</th>
        ${accounts ? html`<th scope="col">Account</th>` : ""}
        <th scope="col">What</th>
        <th scope="col">From</th>
      </tr>
    </thead>
    <tbody>
      ${entries.map(
        (e) =>
          html`<tr>
            <td>${when(e.at)}</td>
            ${accounts && "email" in e ? html`<td><a href="/admin/accounts/${e.accountId}">${e.email}</a></td>` : ""}
            <td>${e.event}${e.detail ? html` ${e.detail}` : ""}</td>
            <td>${e.address}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
