// A usage page's figures as CSV (RFC 4180: CRLF, quoted where needed), a row per period, with no cell a spreadsheet
// would take for a formula.
import type { UsageReport } from "../usage-reads.ts";
import { STATUS_CLASSES } from "../../usage/meter.ts";
import { requestsIn } from "../../usage/store.ts";

/** The header row: the names GET /v1/usage.json gives the same figures. */
const HEADER = ["period_start", "key", "requests", ...STATUS_CLASSES, "bytes"];

/**
 * One cell: text that a spreadsheet would read as a formula (starting with =, +, -, @, a tab or a carriage return,
 * after any spaces) gets a leading apostrophe (OWASP's advice on CSV injection); then quoted if it holds a comma, a
 * quote or a line break.
 */
function csvCell(value: string | number): string {
  let text = String(value);
  if (typeof value === "string" && /^[\s]*[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The CSV of `report`; `key` fills the key column (a key's label, or what the figures are of). */
export function renderUsageCsv(report: UsageReport, key: string): string {
  const lines = [HEADER.join(",")];
  for (const p of report.points) {
    const start = new Date(p.at).toISOString().replace(/\.\d{3}Z$/, "Z");
    const cells = [start, key, requestsIn(p.counts), ...STATUS_CLASSES.map((c) => p.counts[c]), p.counts.bytes];
    lines.push(cells.map(csvCell).join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}
