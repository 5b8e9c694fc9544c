// The serve benchmark's tables as text: number formats, and a table of grouped rows with its notes under it.
import type { WrkResult } from "./wrk.ts";

export const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US");
export const fmtMs = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
export const fmtBytes = (n: number) =>
  n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`;
/** A ratio as `1.23x`, or nothing. */
export const fmtX = (n: number | null) => (n === null ? "" : `${n.toFixed(2)}x`);
/** CPU microseconds per request, or "?" where /proc gave none. */
export const fmtCpuUs = (n: number | undefined) => (n === undefined ? "?" : n.toFixed(1));

/** Below this share of its core, a server was starved by other processes and its req/s says little. */
export const MIN_CORE_SHARE = 0.85;

/** A server's share of its core as a percentage, "!" when under MIN_CORE_SHARE, or "?" where /proc gave none. */
export const fmtCoreShare = (share: number | undefined) =>
  share === undefined ? "?" : `${(share * 100).toFixed(0)}%${share < MIN_CORE_SHARE ? "!" : ""}`;

/** A measured run's cells: req/s, p50 ms, p99 ms, MB/s, CPU us/req and core share. */
export function runCells(r: WrkResult, cpuUs: number | undefined, share: number | undefined): string[] {
  return [
    fmtInt(r.requestsPerSec),
    fmtMs(r.p50),
    fmtMs(r.p99),
    (r.transferPerSec / 1024 / 1024).toFixed(1),
    fmtCpuUs(cpuUs),
    fmtCoreShare(share),
  ];
}

/** A note line per case that has one. */
export function caseNotes(cases: readonly { label: string; note?: string }[]): string[] {
  return cases.filter((c) => c.note).map((c) => `  ${c.label}: ${c.note}`);
}

export interface ReportTable {
  header: string[];
  /** Per column: right-aligned (numbers) or left-aligned. */
  right: boolean[];
  /** The rows; one whose first cell is not empty starts a group, set off by a blank line. */
  rows: string[][];
  /** What the columns mean, under "notes:". */
  legend: string[];
  /** Further lines after the legend (per case). */
  notes: string[];
}

/** The table, columns padded to their widest cell, then "notes:" with the legend and the notes. */
export function renderReportTable(t: ReportTable): string {
  const widths = t.header.map((h, i) => Math.max(h.length, ...t.rows.map((r) => r[i]!.length)));
  const pad = (cells: string[]) =>
    cells
      .map((c, i) => (t.right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  const lines = [pad(t.header), widths.map((w) => "-".repeat(w)).join("  ")];
  for (const [i, r] of t.rows.entries()) {
    if (r[0] && i > 0) lines.push("");
    lines.push(pad(r));
  }
  return [...lines, "", "notes:", ...t.legend, ...t.notes].join("\n");
}
