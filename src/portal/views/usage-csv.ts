// A usage page's figures as CSV (RFC 4180: CRLF, text quoted), a row per period, key and endpoint that had requests,
// with no cell a spreadsheet would take for a formula, whether it splits the lines on `,` or on `;`.
import { STATUS_CLASSES } from "../../usage/meter.ts";
import { requestsIn } from "../../usage/store.ts";
import type { DetailRow } from "../../usage/store.ts";

/**
 * The header row: the names GET /v1/usage.json gives the same figures; `key` is the key's label, `endpoint` its route
 * class (`unknown` for what was counted before endpoints were).
 */
const HEADER = ["period_start", "key", "endpoint", "requests", ...STATUS_CLASSES, "bytes"];

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

/** The CSV of `rows` (oldest first); `label` gives the key column from a key's name in the keys file. */
export function renderUsageCsv(rows: readonly DetailRow[], label: (name: string) => string): string {
  const lines = [HEADER.map(csvCell).join(",")];
  for (const r of rows) {
    const start = new Date(r.at).toISOString().replace(/\.\d{3}Z$/, "Z");
    const c = r.counts;
    const cells = [start, label(r.key), r.route, requestsIn(c), ...STATUS_CLASSES.map((k) => c[k]), c.bytes];
    lines.push(cells.map(csvCell).join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}
