// The serve benchmark's report: a table of absolute figures and ratios per case, then one PASS/FAIL line per target.
import type { ServerMode } from "./child-config.ts";
import { caseNotes, fmtBytes, fmtMs, fmtX, MIN_CORE_SHARE, renderReportTable, runCells } from "./table.ts";
import type { WrkResult } from "./wrk.ts";

/** Targets from the issue: handler >= 0.9x bare, >= 4x serve-handler, p99 under 5 ms at 64 connections; as deployed >= 0.9x bare (issue 10). */
export const TARGETS = { vsBare: 0.9, vsServeHandler: 4, p99Ms: 5 } as const;

/** The servers a case can measure: the children, and the server as `npm run serve` runs it (src/cli/serve.ts). */
export type BenchServer = ServerMode | "deployed";
/** The server a case is about, whose ratios to the others are the targets. */
export type Subject = "handler" | "deployed";

const SERVER_NAMES: Record<BenchServer, string> = {
  handler: "handler",
  deployed: "as deployed",
  bare: "bare",
  "serve-handler": "serve-handler",
};

export interface CaseResult {
  label: string;
  subject: Subject;
  bytes: number;
  note?: string;
  /** Whether the p99 target applies (small bodies); big bodies are bound by bytes, see renderVerdicts. */
  p99Target: boolean;
  results: Partial<Record<BenchServer, WrkResult>>;
  /** Server CPU time (user + system) per request during the measured run, microseconds. */
  cpuUsPerRequest: Partial<Record<BenchServer, number>>;
  /** The server's CPU time over the run's wall time: near 1 when it had its core to itself (it is the bottleneck). */
  coreShare: Partial<Record<BenchServer, number>>;
  /** The ratios below taken within each round, their median over the rounds (measure.ts pairedRatio). */
  paired?: Partial<Record<BenchServer, { rps: number | null; cpu: number | null }>>;
}

/** subject / other requests per second (paired by round when measured so), or null when either is missing. */
export function ratio(c: CaseResult, other: BenchServer): number | null {
  const paired = c.paired?.[other];
  if (paired) return paired.rps;
  const h = c.results[c.subject];
  const o = c.results[other];
  return h && o && o.requestsPerSec > 0 ? h.requestsPerSec / o.requestsPerSec : null;
}

/** The same ratio from CPU cost: other's CPU per request / the subject's (what req/s would be with the core to itself). */
export function cpuRatio(c: CaseResult, other: BenchServer): number | null {
  const paired = c.paired?.[other];
  if (paired) return paired.cpu;
  const h = c.cpuUsPerRequest[c.subject];
  const o = c.cpuUsPerRequest[other];
  return h && o ? o / h : null;
}

export function renderTable(cases: readonly CaseResult[]): string {
  const header = [
    "case",
    "body",
    "server",
    "req/s",
    "p50 ms",
    "p99 ms",
    "MB/s",
    "CPU us/req",
    "core",
    "ours/x req/s",
    "ours/x CPU",
  ];
  const right = [false, true, false, true, true, true, true, true, true, true, true];
  const rows: string[][] = [];
  for (const c of cases) {
    let first = true;
    for (const mode of ["handler", "deployed", "bare", "serve-handler"] as const) {
      const r = c.results[mode];
      if (!r) continue;
      const rt = mode === c.subject ? null : ratio(c, mode);
      const cr = mode === c.subject ? null : cpuRatio(c, mode);
      rows.push([
        first ? c.label : "",
        first ? fmtBytes(c.bytes) : "",
        SERVER_NAMES[mode],
        ...runCells(r, c.cpuUsPerRequest[mode], c.coreShare[mode]),
        fmtX(rt),
        fmtX(cr),
      ]);
      first = false;
    }
  }
  const legend = [
    "  ours/x req/s: our server's requests/s (the handler, or as deployed in the as-deployed cases) over that server's (the",
    "    targets below use this), taken within each round (the two runs back to back) and the median over the rounds:",
    "    not the quotient of the two medians shown, which can come from different rounds.",
    "  ours/x CPU: that server's CPU time per request over ours (CPU us/req = the server process's user+system",
    "    time / requests): a second view, less disturbed than req/s when other processes share core 0, but not immune",
    "    (a starved server handles more requests per wake-up, which lowers its CPU per request).",
    `  core: the server's CPU time over the run's wall time; "!" below ${MIN_CORE_SHARE * 100}%: the server was not the bottleneck all the time`,
    "    (other processes took core 0 from it, or core 1 from wrk).",
  ];
  return renderReportTable({ header, right, rows, legend, notes: caseNotes(cases) });
}

export interface Verdict {
  line: string;
  pass: boolean;
}

/** One line per target; a target passes when every case it applies to meets it. */
export function renderVerdicts(cases: readonly CaseResult[], connections: number): Verdict[] {
  const out: Verdict[] = [];
  const ratioTarget = (subject: Subject, other: ServerMode, min: number) => {
    const measured = cases
      .filter((c) => c.subject === subject)
      .map((c) => ({ c, r: ratio(c, other), cpu: cpuRatio(c, other) }))
      .filter((x) => x.r !== null);
    if (measured.length === 0) return;
    const pass = measured.every((x) => x.r! >= min);
    const all = measured
      .map((x) => `${x.c.label} ${x.r!.toFixed(2)}x${x.cpu !== null ? ` (CPU ${x.cpu.toFixed(2)}x)` : ""}`)
      .join(", ");
    const who = subject === "handler" ? "handler" : "as-deployed";
    out.push({
      pass,
      line: `${pass ? "PASS" : "FAIL"}  ${who}/${other} req/s >= ${min}x in every ${subject === "handler" ? "" : "as-deployed "}case: ${all}`,
    });
  };
  ratioTarget("handler", "bare", TARGETS.vsBare);
  ratioTarget("handler", "serve-handler", TARGETS.vsServeHandler);
  ratioTarget("deployed", "bare", TARGETS.vsBare);

  const p99 = cases
    .filter((c) => c.subject === "handler" && c.results.handler && c.p99Target)
    .map((c) => ({ c, p: c.results.handler!.p99, bare: c.results.bare?.p99 }));
  if (p99.length) {
    const pass = p99.every((x) => x.p < TARGETS.p99Ms);
    const detail = p99
      .map((x) => `${x.c.label} ${fmtMs(x.p)} ms${x.bare !== undefined ? ` (bare ${fmtMs(x.bare)})` : ""}`)
      .join(", ");
    out.push({
      pass,
      line: `${pass ? "PASS" : "FAIL"}  handler p99 < ${TARGETS.p99Ms} ms at ${connections} connections, product detail: ${detail}`,
    });
  }
  for (const c of cases.filter((x) => x.subject === "handler" && x.results.handler && !x.p99Target)) {
    const h = c.results.handler!;
    const bound = (connections / Math.max(h.requestsPerSec, c.results.bare?.requestsPerSec ?? 0)) * 1000;
    out.push({
      pass: true,
      line: `info  ${c.label} p99 ${fmtMs(h.p99)} ms (bare ${c.results.bare ? fmtMs(c.results.bare.p99) : "-"}): no p99 target; with ${connections} connections even the bare server's mean latency is ${fmtMs(bound)} ms (Little's law: connections / req/s)`,
    });
  }
  const deployedP99 = cases
    .filter((c) => c.subject === "deployed" && c.results.deployed)
    .map(
      (c) =>
        `${c.label} ${fmtMs(c.results.deployed!.p99)} ms (bare ${c.results.bare ? fmtMs(c.results.bare.p99) : "-"})`,
    );
  if (deployedP99.length)
    out.push({ pass: true, line: `info  as-deployed p99 (no target of its own): ${deployedP99.join(", ")}` });
  const starved = cases.flatMap((c) =>
    Object.entries(c.coreShare)
      .filter(([, v]) => v < MIN_CORE_SHARE)
      .map(([m, v]) => `${c.label}/${m} ${(v * 100).toFixed(0)}%`),
  );
  if (starved.length) {
    out.push({
      pass: true,
      line: `WARN  in ${starved.length} measurement(s) the server used less than ${MIN_CORE_SHARE * 100}% of its core (${starved.join(", ")}): other processes took core 0 from it, or core 1 from wrk, so req/s and latency are not reliable; rerun on a quiet machine (the CPU ratios are a rougher but steadier guide)`,
    });
  }
  const errors = cases.flatMap((c) =>
    Object.entries(c.results)
      .filter(([, r]) => r.non2xx + r.socketErrors > 0)
      .map(
        ([m, r]) =>
          `${c.label}/${m}: ${r.non2xx} non-2xx${r.socketErrors ? `, socket errors ${r.socketErrorDetail}` : ""}`,
      ),
  );
  out.push({
    pass: errors.length === 0,
    line: `${errors.length ? "FAIL" : "PASS"}  no non-2xx responses or socket errors in the cases of the table above (all 200s; the rejection cases have a line of their own)${errors.length ? ` (${errors.join("; ")})` : ""}`,
  });
  return out;
}
