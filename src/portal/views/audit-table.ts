// The audit trail as a table: an account's own (the account page, the operator's page of it), or every account's.
import { html } from "hono/html";
import type { AccountAuditEntry, AuditEntry } from "../store/audit.ts";
import { when } from "./layout.ts";
import type { Html } from "./layout.ts";

/**
 * `text` with a line-break opportunity after each of `after` (<wbr>), in a cell that breaks nothing else: at a phone's
 * width an address or an event's name breaks at a colon or a dot, never mid-way ("127.0.|0.1").
 */
const breakAfter = (text: string, after: RegExp) => {
  const parts = text.split(after);
  return parts.map((part, i) => (i < parts.length - 1 ? html`${part}<wbr />` : part));
};

/**
 * The events, newest first, under `caption`; with `accounts`, a column says whose each event is. IPv4 addresses never
 * break; IPv6 ones at colons, events' names at dots, an event's detail (free text) anywhere.
 */
export function auditTable(entries: (AuditEntry | AccountAuditEntry)[], caption: string, accounts = false): Html {
  if (!entries.length) return html`<p>Nothing yet.</p>`;
  return html`<table class="audit">
    <caption class="hint">
      ${caption}
    </caption>
    <thead>
      <tr>
        <th scope="col">When</th>
        ${accounts ? html`<th scope="col">Account</th>` : ""}
        <th scope="col">What</th>
        <th scope="col">By</th>
        <th scope="col">From</th>
      </tr>
    </thead>
    <tbody>
      ${entries.map(
        (e) =>
          html`<tr>
            <td>${when(e.at)}</td>
            ${accounts && "email" in e ? html`<td class="who"><a href="/admin/accounts/${e.accountId}">${e.email}</a></td>` : ""}
            <td>${breakAfter(e.event, /(?<=\.)/)}${e.detail ? html` <span class="detail">${e.detail}</span>` : ""}</td>
            <td class="who">${e.actor ? breakAfter(e.actor, /(?<=@)/) : "—"}</td>
            <td>${breakAfter(e.address, /(?<=:)/)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
