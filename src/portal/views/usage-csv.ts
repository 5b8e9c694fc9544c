// A usage page's figures as CSV (RFC 4180: CRLF, text quoted), a row per period, with no cell a spreadsheet would take
// for a formula, whether it splits the lines on `,` or on `;`.
import type { UsageReport } from "../usage-reads.ts";
import { STATUS_CLASSES } from "../../usage/meter.ts";
import { requestsIn } from "../../usage/store.ts";

/** The header row: the names GET /v1/usage.json gives the same figures. */
const HEADER = ["period_start", "key", "requests", ...STATUS_CLASSES, "bytes"];

/**
 * Where a spreadsheet would start reading a formula in a text cell: at its start, or after a `,`, a `;`, a tab or a
 * line break (where a reader splitting on another separator than ours starts a new cell: quotes do not stop it), then
 * any spaces or quotes, then =, +, -, @, a tab or a carriage return.
 */
const FORMULA_START = /(?<=^|[,;\t\r\n])(?=[ "]*[=+\-@\t\r])/g;

/**
 * One cell (OWASP's advice on CSV injection): text is always quoted, its quotes doubled, and gets an apostrophe
 * wherever a spreadsheet reading it with `,` or with `;` as the separator would start a formula; numbers as they are.
 */
function csvCell(value: string | number): string {
  if (typeof value === "number") return String(value);
  return `"${value.replace(FORMULA_START, "'").replaceAll('"', '""')}"`;
}

/** The CSV of `report`; `key` fills the key column (a key's label, or what the figures are of). */
export function renderUsageCsv(report: UsageReport, key: string): string {
  const lines = [HEADER.map(csvCell).join(",")];
  for (const p of report.points) {
    const start = new Date(p.at).toISOString().replace(/\.\d{3}Z$/, "Z");
    const cells = [start, key, requestsIn(p.counts), ...STATUS_CLASSES.map((c) => p.counts[c]), p.counts.bytes];
    lines.push(cells.map(csvCell).join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}
