// The usage pages (a key's, or every key of an account's, for the partner and the operator): the span's choice, the
// totals, the chart, the figures by key and by endpoint, the same per period as tables folded a day (or a month) each
// so that none is taller than a screen or two at a phone's width, and the CSV download.
import { html } from "hono/html";
import type { PartnerKey } from "../partner-keys.ts";
import type { Counts, Point } from "../../usage/store.ts";
import { requestsIn, zeroCounts } from "../../usage/store.ts";
import { SPANS } from "../usage-reads.ts";
import type { KeyUse, SpanName, UsageReport } from "../usage-reads.ts";
import { CLASSES, usageChart } from "./usage-chart.ts";
import { lastUseText } from "./key-pages.ts";
import { when } from "./layout.ts";
import type { Html } from "./layout.ts";

const DAY_MS = 86_400_000;

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
const plural = (n: number, word: string) => `${number(n)} ${word}${n === 1 ? "" : "s"}`;

/** The endpoints (route classes, src/api/endpoints.ts) in words; `unknown` holds what was counted before them. */
const ENDPOINT_WORDS: Readonly<Record<string, string>> = {
  sale_list: "Sale lists",
  sale_detail: "Sale details",
  product: "Products",
  categories: "Categories",
  sizes: "Sizes",
  search: "Product search",
  events: "Event stream",
  calendar: "Sale calendars",
  usage: "Usage",
  docs: "Documentation",
  health: "Health",
  metrics: "Metrics",
  edge: "Key checks",
  other: "Other paths",
  unknown: "Not recorded",
};

/** The header row of a figures table: what its rows are, then all requests and each status class. */
const headRow = (first: string) =>
  html`<tr>
    <th scope="col">${first}</th>
    <th scope="col">All</th>
    ${CLASSES.map((k) => html`<th scope="col">${k.name}</th>`)}
  </tr>`;

/** A row of figures headed by `head`. */
const figuresRow = (head: Html | string, c: Counts) =>
  html`<tr>
    <th scope="row">${head}</th>
    <td>${number(requestsIn(c))}</td>
    ${CLASSES.map((k) => html`<td>${number(c[k.key])}</td>`)}
  </tr>`;

const sum = (points: readonly Point[]): Counts => {
  const total = zeroCounts();
  for (const p of points) for (const k of Object.keys(total) as (keyof Counts)[]) total[k] += p.counts[k];
  return total;
};

/**
 * The periods folded into groups, newest first: hours by UTC day, days by UTC month; each group's rows oldest first,
 * its label, and the instant it is named by (`datetime`).
 */
function groups(report: UsageReport) {
  const hourly = report.step < DAY_MS;
  const found = new Map<string, Point[]>();
  for (const p of report.points) {
    const iso = new Date(p.at).toISOString();
    const id = hourly ? iso.slice(0, 10) : iso.slice(0, 7);
    const list = found.get(id);
    if (list) list.push(p);
    else found.set(id, [p]);
  }
  const month = (id: string) =>
    new Date(`${id}-01T00:00:00Z`).toLocaleString("en", { month: "long", year: "numeric", timeZone: "UTC" });
  return [...found].reverse().map(([id, points]) => ({
    id,
    points,
    label: hourly ? id : month(id),
    words: hourly ? `on ${id}` : `in ${month(id)}`,
  }));
}

/** A period's row header: the hour of a day ("17:00"), or the day ("2026-11-22"), with its instant. */
function periodHead(at: number, hourly: boolean): Html {
  const iso = new Date(at).toISOString();
  return hourly
    ? html`<time datetime="${iso.slice(0, 16)}Z">${iso.slice(11, 16)}</time>`
    : html`<time datetime="${iso.slice(0, 10)}">${iso.slice(0, 10)}</time>`;
}

/**
 * The figures per period as tables, a UTC day of hours (or a month of days) each in a disclosure, the newest open:
 * at most 24 (31) rows a table, one line each at a phone's width, for screen readers and exact reading.
 */
function periodTables(report: UsageReport): Html {
  const hourly = report.step < DAY_MS;
  const unit = hourly ? "Hour" : "Day";
  return html`${groups(report).map(
    (g, i) =>
      html`<details ${i === 0 ? "open" : ""}>
        <summary>${g.label}: ${plural(requestsIn(sum(g.points)), "request")}</summary>
        <table class="figures">
          <caption>
            Requests per ${unit.toLowerCase()} by status ${g.words} (UTC)
          </caption>
          <thead>
            ${headRow(`${unit} (UTC)`)}
          </thead>
          <tbody>
            ${g.points.map((p) => figuresRow(periodHead(p.at, hourly), p.counts))}
          </tbody>
          <tfoot>
            ${figuresRow(`${hourly ? "Day" : "Month"} total`, sum(g.points))}
          </tfoot>
        </table>
      </details>`,
  )}`;
}

/** The busiest first, then by name. */
const busiestFirst = <T>(entries: Iterable<[T, Counts]>, name: (t: T) => string) =>
  [...entries].sort(([a, ca], [b, cb]) => requestsIn(cb) - requestsIn(ca) || name(a).localeCompare(name(b), "en"));

/** The figures by endpoint over the span, busiest first, and their total. */
function endpointTable(report: UsageReport): Html {
  if (report.byRoute.size === 0) return html`<p>No requests in this span.</p>`;
  return html`<table class="figures">
    <caption>
      Requests by endpoint and status, ${SPANS[report.span].words}
    </caption>
    <thead>
      ${headRow("Endpoint")}
    </thead>
    <tbody>
      ${busiestFirst(report.byRoute, (r) => r).map(([route, c]) =>
        figuresRow(html`${ENDPOINT_WORDS[route] ?? route} <code class="route">${route}</code>`, c),
      )}
    </tbody>
    <tfoot>
      ${figuresRow("All endpoints", report.totals)}
    </tfoot>
  </table>`;
}

/** A key's name on the usage pages: its label, and its first and last 4 characters. */
const keyWords = (k: PartnerKey) => html`${k.label} <span class="key-ends">${k.first4}…${k.last4}</span>`;

/** A rotated key's old and new key's last use, while the old one is accepted. */
function rotationText(use: KeyUse): Html {
  const r = use.rotation;
  if (!r) return html``;
  return html`<dl class="totals rotation">
    <dt>Replaced</dt>
    <dd>${when(r.rotated)}</dd>
    <dt>Old key accepted until</dt>
    <dd>${when(r.graceUntil)}</dd>
    <dt>Old key last used</dt>
    <dd>${r.previous === null ? "not since it was replaced" : when(r.previous)}</dd>
    <dt>New key last used</dt>
    <dd>${r.current === null ? "not yet" : when(r.current)}</dd>
  </dl>`;
}

/** The figures by key over the span (every key that was used in it or is live), busiest first. */
function keyTable(report: UsageReport, keys: readonly PartnerKey[], uses: ReadonlyMap<string, KeyUse>): Html {
  const shown = keys.filter((k) => k.status !== "revoked" || report.byKey.has(k.name));
  if (shown.length === 0) return html`<p>No keys.</p>`;
  const rows = busiestFirst(
    shown.map((k): [PartnerKey, Counts] => [k, report.byKey.get(k.name) ?? zeroCounts()]),
    (k) => k.label,
  );
  return html`<table class="figures by-key">
    <caption>
      Requests by key and status, ${SPANS[report.span].words}
    </caption>
    <thead>
      ${headRow("Key")}
    </thead>
    <tbody>
      ${rows.map(([k, c]) => {
        const use = uses.get(k.id);
        const r = use?.rotation;
        return figuresRow(
          html`${keyWords(k)}${k.status === "active" ? "" : html` (${k.status})`}
            <span class="key-use">last used ${lastUseText(use)}</span>
            ${
              r
                ? html`<span class="key-use"
                    >old key (accepted until ${when(r.graceUntil)}) last used
                    ${r.previous === null ? "not since it was replaced" : when(r.previous)}</span
                  >`
                : ""
            }`,
          c,
        );
      })}
    </tbody>
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
  /** The keys whose figures these are, each one's use by key ID. */
  keys: readonly PartnerKey[];
  uses: ReadonlyMap<string, KeyUse>;
  /** The one key of a key's page (its last use is shown, and no table by key). */
  key?: PartnerKey;
}

/** A usage page's body. */
export function usagePage(report: UsageReport, subject: UsageSubject): Html {
  const { totals } = report;
  const unit = report.step < DAY_MS ? "hour" : "day";
  const use = subject.key && subject.uses.get(subject.key.id);
  const spanLink = (name: SpanName, text: string) =>
    name === report.span
      ? html`<a href="${subject.path}?span=${name}" aria-current="page">${text}</a>`
      : html`<a href="${subject.path}?span=${name}">${text}</a>`;
  return html`<p>
      Requests made with ${subject.words}, per ${unit} over ${SPANS[report.span].words}, by status, key and endpoint.
      Requests appear here within 15 seconds. Times are UTC.
    </p>
    ${
      subject.key
        ? html`<p>Last used: ${lastUseText(use)}</p>
            ${use ? rotationText(use) : ""}`
        : ""
    }
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
    ${
      subject.key
        ? ""
        : html`<h2>By key</h2>
            ${keyTable(report, subject.keys, subject.uses)}`
    }
    <h2>By endpoint</h2>
    ${endpointTable(report)}
    <h2>Per ${unit}</h2>
    ${usageChart(report, subject.words)} ${periodTables(report)}
    <div class="actions">
      <a class="button secondary" href="${subject.path}.csv?span=${report.span}" download>Download as CSV</a>
      <a class="button secondary" href="${subject.back.href}">${subject.back.text}</a>
    </div>`;
}
