// The usage pages (a key's, or every key of an account's, for the partner and the operator): the span's choice, the
// totals, the chart, the same figures as a table, and the CSV download.
import { html } from "hono/html";
import type { Counts } from "../../usage/store.ts";
import { requestsIn } from "../../usage/store.ts";
import { SPANS } from "../usage-reads.ts";
import type { KeyUse, SpanName, UsageReport } from "../usage-reads.ts";
import { CLASSES, periodLabel, usageChart } from "./usage-chart.ts";
import { lastUseText } from "./key-pages.ts";
import type { Html } from "./layout.ts";

/** Bytes in words, to three significant figures (1 kB is 1000 bytes). */
function bytesText(n: number): string {
  if (n < 1000) return `${n} bytes`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n / 1000;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v.toPrecision(3)} ${units[u]}`;
}

const number = (n: number) => n.toLocaleString("en");

/** A period's label in the table: its day and hour each kept on one line (a phone's narrow column wraps between). */
const periodCell = (at: number, step: number) =>
  periodLabel(at, step)
    .split(" ")
    .map((part) => html`<span class="nowrap">${part}</span>`)
    .reduce((all, part) => html`${all} ${part}`);

/** The figures as a table: a row per period (oldest first) and the totals, for screen readers and exact reading. */
function figuresTable(report: UsageReport): Html {
  const unit = report.step < 86_400_000 ? "Hour" : "Day";
  const cells = (c: Counts) =>
    html`<td>${number(requestsIn(c))}</td>
      ${CLASSES.map((k) => html`<td>${number(c[k.key])}</td>`)}`;
  return html`<table class="figures">
    <caption>
      Requests per ${unit.toLowerCase()} by status, ${SPANS[report.span].words} (UTC)
    </caption>
    <thead>
      <tr>
        <th scope="col">${unit} (UTC)</th>
        <th scope="col">All</th>
        ${CLASSES.map((k) => html`<th scope="col">${k.name}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${report.points.map(
        (p) =>
          html`<tr>
            <th scope="row">${periodCell(p.at, report.step)}</th>
            ${cells(p.counts)}
          </tr>`,
      )}
    </tbody>
    <tfoot>
      <tr>
        <th scope="row">Total</th>
        ${cells(report.totals)}
      </tr>
    </tfoot>
  </table>`;
}

/** What a usage page is about, and where its links go. */
export interface UsageSubject {
  /** "the key “shop” (ab12…cd34)", "every key of the account": says whose figures these are. */
  words: string;
  /** The page's path (the spans' links add `?span=`; the CSV's is `<path>.csv`). */
  path: string;
  /** Where "back" goes, and its text. */
  back: { href: string; text: string };
  /** The key's last use, on a key's page. */
  use?: KeyUse;
}

/** A usage page's body. */
export function usagePage(report: UsageReport, subject: UsageSubject): Html {
  const { totals } = report;
  const spanLink = (name: SpanName, text: string) =>
    name === report.span
      ? html`<a href="${subject.path}?span=${name}" aria-current="page">${text}</a>`
      : html`<a href="${subject.path}?span=${name}">${text}</a>`;
  return html`<p>
      Requests made with ${subject.words}, per ${report.step < 86_400_000 ? "hour" : "day"} over
      ${SPANS[report.span].words}, by status. Requests appear here within 15 seconds. Times are UTC.
    </p>
    ${subject.use ? html`<p>Last used: ${lastUseText(subject.use)}</p>` : ""}
    <nav aria-label="Span" class="spans">
      ${spanLink("48h", "48 hours")} ${spanLink("30d", "30 days")} ${spanLink("90d", "90 days")}
    </nav>
    <h2>Totals</h2>
    <dl class="totals">
      <dt>Requests</dt>
      <dd>${number(requestsIn(totals))}</dd>
      ${CLASSES.map(
        (k) =>
          html`<dt>${k.words}</dt>
            <dd>${number(totals[k.key])}</dd>`,
      )}
      <dt>Data sent</dt>
      <dd>${bytesText(totals.bytes)}</dd>
    </dl>
    <h2>Per ${report.step < 86_400_000 ? "hour" : "day"}</h2>
    ${usageChart(report, subject.words)}
    <details>
      <summary>The figures as a table</summary>
      ${figuresTable(report)}
    </details>
    <div class="actions">
      <a class="button secondary" href="${subject.path}.csv?span=${report.span}" download>Download as CSV</a>
      <a class="button secondary" href="${subject.back.href}">${subject.back.text}</a>
    </div>`;
}
