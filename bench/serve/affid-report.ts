// The affid cases' report: a table of both modes per case with the affid/plain ratios, then their PASS/FAIL lines.
import type { AffidMode } from "./affid.ts";
import type { AffidResult, AffidRun } from "./affid-measure.ts";
import { SETTLE_MAX_SEC } from "./affid-measure.ts";
import type { Verdict } from "./report.ts";
import { caseNotes, fmtBytes, fmtInt, fmtX, MIN_CORE_SHARE, renderReportTable, runCells } from "./table.ts";

/** Target from issue 14: with a new affid on every request, at least half the requests/s of the same resource without. */
export const AFFID_TARGET = 0.5;

/** affid / plain requests per second, or null when either is missing. */
export function affidRatio(c: AffidResult): number | null {
  const a = c.runs.affid?.wrk.requestsPerSec;
  const p = c.runs.plain?.wrk.requestsPerSec;
  return a !== undefined && p ? a / p : null;
}

/** affid / plain CPU time per request (above 1: a request with a new affid costs more). */
export function affidCpuRatio(c: AffidResult): number | null {
  const a = c.runs.affid?.cpuUs;
  const p = c.runs.plain?.cpuUs;
  return a !== undefined && p ? a / p : null;
}

function encodingMix(run: AffidRun): string {
  const e = run.encodings;
  if (!e) return "?";
  const total = e.br + e.gzip + e.identity + e.other;
  if (total === 0) return "-";
  const parts = (["br", "gzip", "identity", "other"] as const)
    .filter((k) => e[k] > 0)
    .map((k) => `${k === "identity" ? "id" : k} ${Math.round((100 * e[k]) / total)}%`);
  return parts.join(" ");
}

export function renderAffidTable(cases: readonly AffidResult[]): string {
  const header = [
    "case",
    "plain body",
    "mode",
    "req/s",
    "p50 ms",
    "p99 ms",
    "MB/s",
    "CPU us/req",
    "core",
    "tail s",
    "sent as",
    "affid/plain req/s",
    "affid/plain CPU us/req",
  ];
  const right = [false, true, false, true, true, true, true, true, true, true, false, true, true];
  const rows: string[][] = [];
  for (const c of cases) {
    let first = true;
    for (const mode of ["affid", "plain"] as const satisfies AffidMode[]) {
      const run = c.runs[mode];
      if (!run) continue;
      const rt = mode === "affid" ? affidRatio(c) : null;
      const cr = mode === "affid" ? affidCpuRatio(c) : null;
      rows.push([
        first ? c.label : "",
        first ? fmtBytes(c.bytes) : "",
        mode,
        ...runCells(run.wrk, run.cpuUs, run.share),
        `${run.tailSec.toFixed(1)}${run.settled ? "" : "+"}`,
        encodingMix(run),
        fmtX(rt),
        fmtX(cr),
      ]);
      first = false;
    }
  }
  const legend = [
    "  affid: our handler, GET <path>?apikey=K&affid=<new on every request> (a wrk Lua script); plain: our handler, the same",
    "    path without affid, through the same kind of script; both with the Accept-Encoding in the case's name. Median round.",
    "  CPU us/req: the handler's user+system time (event loop and thread pool) from the run's start until it was idle again,",
    "    over the requests answered: work left when wrk stopped (queued requests, background compression) is counted.",
    `  tail s: seconds the handler stayed busy after wrk stopped ("+": still busy after ${SETTLE_MAX_SEC} s, the next run was disturbed).`,
    "  sent as: the Content-Encoding of the responses during the run (br, gzip, id = none).",
    "  affid/plain CPU us/req: above 1, a request with a new affid costs that many times a plain one.",
  ];
  return renderReportTable({ header, right, rows, legend, notes: caseNotes(cases) });
}

/** One line per affid case for the target, then problems from the checks, errors, and disturbed runs. */
export function renderAffidVerdicts(cases: readonly AffidResult[]): Verdict[] {
  const out: Verdict[] = [];
  for (const c of cases) {
    const r = affidRatio(c);
    if (r === null) continue;
    const a = c.runs.affid!;
    const p = c.runs.plain!;
    const cr = affidCpuRatio(c);
    const pass = r >= AFFID_TARGET;
    out.push({
      pass,
      line: `${pass ? "PASS" : "FAIL"}  ${c.label}: affid/plain req/s >= ${AFFID_TARGET}x: ${r.toFixed(2)}x (${fmtInt(a.wrk.requestsPerSec)} vs ${fmtInt(p.wrk.requestsPerSec)} req/s${cr !== null ? `; CPU us/req ${a.cpuUs!.toFixed(0)} vs ${p.cpuUs!.toFixed(0)}, ${cr.toFixed(2)}x` : ""})`,
    });
  }
  const problems = cases.flatMap((c) => c.problems.map((p) => `${c.label}: ${p}`));
  if (problems.length)
    out.push({
      pass: false,
      line: `FAIL  affid responses to Accept-Encoding: br, gzip are br or gzip (checked before measuring): ${problems.join("; ")}`,
    });
  const uncompressed = cases.flatMap((c) => {
    const e = c.runs.affid?.encodings;
    return e && !c.label.endsWith("(identity)") && e.identity > 0
      ? [`${c.label}: ${fmtInt(e.identity)} of ${fmtInt(e.br + e.gzip + e.identity + e.other)}`]
      : [];
  });
  if (uncompressed.length)
    out.push({
      pass: true,
      line: `WARN  affid responses sent uncompressed during measurement to a client that offered br and gzip (less work for the handler, several times the bytes on the wire): ${uncompressed.join(", ")}`,
    });
  const errors = cases.flatMap((c) =>
    Object.entries(c.runs)
      .filter(([, run]) => run.wrk.non2xx + run.wrk.socketErrors > 0)
      .map(
        ([m, run]) =>
          `${c.label}/${m}: ${run.wrk.non2xx} non-2xx${run.wrk.socketErrors ? `, socket errors ${run.wrk.socketErrorDetail}` : ""}`,
      ),
  );
  if (cases.length)
    out.push({
      pass: errors.length === 0,
      line: `${errors.length ? "FAIL" : "PASS"}  no non-2xx responses or socket errors during the affid measurements${errors.length ? ` (${errors.join("; ")})` : ""}`,
    });
  const disturbed = cases.filter((c) => c.unsettled > 0).map((c) => `${c.label} ${c.unsettled}`);
  if (disturbed.length)
    out.push({
      pass: true,
      line: `WARN  the handler was still busy ${SETTLE_MAX_SEC} s after a run (runs with warm-ups: ${disturbed.join(", ")}): the run after it shared the core with that leftover work`,
    });
  const starved = cases.flatMap((c) =>
    Object.entries(c.runs)
      .filter(([, run]) => run.share !== undefined && run.share < MIN_CORE_SHARE)
      .map(([m, run]) => `${c.label}/${m} ${(run.share! * 100).toFixed(0)}%`),
  );
  if (starved.length)
    out.push({
      pass: true,
      line: `WARN  in ${starved.length} affid measurement(s) the handler used less than ${MIN_CORE_SHARE * 100}% of its core (${starved.join(", ")}): it was not the bottleneck all the time`,
    });
  return out;
}
