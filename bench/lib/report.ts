// The benchmarks' report as text: number formats, a table of grouped rows with its notes under it, and the
// PASS/FAIL lines (a verdict per target), with the warnings every measured table gets.
import type { Run } from "./rounds.ts";

export const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US");
export const fmtMs = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
export const fmtBytes = (n: number) =>
  n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`;
/** A ratio as `1.23x`, or nothing. */
export const fmtX = (n: number | null) => (n === null ? "" : `${n.toFixed(2)}x`);
/** CPU microseconds per request, or "?" where /proc gave none. */
export const fmtCpuUs = (n: number | undefined) => (n === undefined ? "?" : n.toFixed(1));

/** Below this share of its core, a server was starved by other processes and its req/s says little. */
const MIN_CORE_SHARE = 0.85;
/** Above this share of the machine's CPU time stolen by the hypervisor in a run, the run is disturbed. */
const MAX_STEAL = 0.05;

/** A server's share of its core as a percentage, "!" when under MIN_CORE_SHARE, or "?" where /proc gave none. */
const fmtCoreShare = (share: number | undefined) =>
  share === undefined ? "?" : `${(share * 100).toFixed(0)}%${share < MIN_CORE_SHARE ? "!" : ""}`;

/** One row of a measured table: a server or a stream of requests, and its run. */
export interface Row {
  name: string;
  run: Run;
  /** Its response body's size, when the rows of a group differ (else the group's, on its first row). */
  bytes?: number;
  /** Its cells in the table's extra columns. */
  extra?: string[];
  /** Its two ratios (req/s, CPU us/req) to the group's reference; blank when null or absent. */
  ratios?: readonly [number | null, number | null];
}

/** A table of measured runs. */
export interface Table {
  /** Headers: the group's column and the row's, any extra columns (after the run's), then the two ratio columns. */
  columns: string[];
  /** The groups (cases, or servers): their rows under their label and body size, a blank line between groups. */
  groups: readonly { label: string; bytes?: number; rows: readonly Row[] }[];
  /** What the columns mean, and notes per case, under "notes:". */
  notes: string[];
}

/** The table, columns padded to their widest cell (text left-aligned, numbers right-aligned), then "notes:". */
export function renderTable(t: Table): string {
  const [group, row, ...rest] = t.columns;
  const header = [group!, row!, "body", "req/s", "p50 ms", "p99 ms", "MB/s", "CPU us/req", "core", ...rest];
  const rows = t.groups.map((g) =>
    g.rows.map(({ name, run: { r, cpu, share }, bytes, extra = [], ratios = [null, null] }, i) => {
      const size = bytes ?? (i ? undefined : g.bytes);
      const [mbs, req] = [(r.transferPerSec / 1024 / 1024).toFixed(1), fmtInt(r.requestsPerSec)];
      const cells = [req, fmtMs(r.p50), fmtMs(r.p99), mbs, fmtCpuUs(cpu), fmtCoreShare(share), ...extra];
      return [i ? "" : g.label, name, size === undefined ? "" : fmtBytes(size), ...cells, ...ratios.map(fmtX)];
    }),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.flat().map((r) => r[i]!.length)));
  const left = header.map((_, i) => i < 2 || rows.flat().some((r) => /^[a-z]/i.test(r[i]!)));
  const pad = (cells: string[]) =>
    cells
      .map((c, i) => (left[i] ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  const body = rows.flatMap((g, i) => [...(i ? [""] : []), ...g.map(pad)]);
  return [pad(header), widths.map((w) => "-".repeat(w)).join("  "), ...body, "", "notes:", ...t.notes].join("\n");
}

/** Each row of each group as [group/row, run]. */
export const rowRuns = (t: Pick<Table, "groups">) =>
  t.groups.flatMap((g) => g.rows.map((r) => [`${g.label}/${r.name}`, r.run] as const));

export interface Verdict {
  line: string;
  pass: boolean;
}

/** A target's line: "PASS  <what>" or "FAIL  <what>". */
export const verdict = (pass: boolean, what: string): Verdict => ({ pass, line: `${pass ? "PASS" : "FAIL"}  ${what}` });
/** Lines that pass whatever they say: "info  <what>" or "WARN  <what>"; none when `when` is false. */
export const note = (kind: "info" | "WARN", what: string, when = true): Verdict[] =>
  when ? [{ pass: true, line: `${kind}  ${what}` }] : [];

/** PASS when no run of the table got a non-2xx or a socket error, else FAIL naming them. */
export function errorsVerdict(t: Table, what: string): Verdict {
  const errors = rowRuns(t).filter(([, { r }]) => r.non2xx + r.socketErrors > 0);
  const list = errors.map(
    ([name, { r }]) => `${name}: ${r.non2xx} non-2xx${r.socketErrors ? `, socket errors ${r.socketErrorDetail}` : ""}`,
  );
  return verdict(
    !errors.length,
    `no non-2xx responses or socket errors ${what}${list.length ? ` (${list.join("; ")})` : ""}`,
  );
}

/**
 * WARN lines naming the runs of the table whose server had less than MIN_CORE_SHARE of its core, and the rows with a
 * round in which the hypervisor took more than MAX_STEAL of the machine's CPU time (steal), if any.
 */
export function starvedWarnings(t: Table, what: string): Verdict[] {
  const starved = rowRuns(t).filter(([, r]) => r.share !== undefined && r.share < MIN_CORE_SHARE);
  const list = starved.map(([name, r]) => `${name} ${(r.share! * 100).toFixed(0)}%`).join(", ");
  const text = `in ${starved.length} ${what} the server used less than ${MIN_CORE_SHARE * 100}% of its core (${list}): other processes took its core from it, or wrk's, so req/s and latency are not reliable; rerun on a quiet machine (the CPU ratios are a rougher but steadier guide)`;
  const stolen = rowRuns(t).flatMap(([name, r]) => {
    const most = Math.max(...(r.byRound ?? [r]).map((x) => x.steal ?? 0));
    return most > MAX_STEAL ? [`${name} up to ${(most * 100).toFixed(1)}%`] : [];
  });
  const stealText = `the hypervisor took more than ${MAX_STEAL * 100}% of the machine's CPU time (steal) in a round of ${stolen.length} row(s) (${stolen.join(", ")}): other guests on the host slowed those runs, so their ratios are not reliable; rerun when the host is quieter`;
  return [...note("WARN", text, starved.length > 0), ...note("WARN", stealText, stolen.length > 0)];
}
