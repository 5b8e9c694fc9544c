// The rejection cases' report: per server, the 200 and each rejection side by side (req/s, CPU us/req and their
// ratios to the 200), then a PASS/FAIL line per rejection (CPU us/req <= the 200's) and one on the statuses seen.
import { pairedRatio } from "./measure.ts";
import type { Run } from "./measure.ts";
import type { Verdict } from "./report.ts";
import { LOCKOUT_WAIT_MS, REJECT_SERVER_NAMES, SLOW_KEY_LIMIT } from "./reject.ts";
import type { RejectCase, RejectGroup } from "./reject.ts";
import { fmtBytes, fmtCoreShare, fmtCpuUs, fmtInt, fmtMs, fmtX, MIN_CORE_SHARE, renderReportTable } from "./table.ts";

export interface RejectResult {
  group: RejectGroup;
  /** The 200's median round. */
  baseline: Run;
  /** Each case's median round, by label. */
  runs: Map<string, Run>;
}

/** Case CPU per request over the 200's, within each round, the median over rounds: above 1, a rejection costs more. */
const cpuVs200 = (run: Run, base: Run) => pairedRatio(run, base, (x) => x.cpu);
const rpsVs200 = (run: Run, base: Run) => pairedRatio(run, base, (x) => x.r.requestsPerSec);

export function renderRejectTable(results: readonly RejectResult[]): string {
  const header = [
    "server",
    "case",
    "body",
    "req/s",
    "p50 ms",
    "p99 ms",
    "CPU us/req",
    "core",
    "non-2xx",
    "x/200 req/s",
    "x/200 CPU us/req",
  ];
  const right = [false, false, true, true, true, true, true, true, true, true, true];
  const rows: string[][] = [];
  for (const res of results) {
    const entries: [string, number, Run][] = [["200 product detail, identity", res.group.baseline.bytes, res.baseline]];
    for (const c of res.group.cases) {
      const run = res.runs.get(c.label);
      if (run) entries.push([c.label.replace(/^reject /, "").replace(/ \[.*\]$/, ""), c.bytes, run]);
    }
    for (const [i, [name, bytes, run]] of entries.entries()) {
      const r = run.r;
      rows.push([
        i === 0 ? REJECT_SERVER_NAMES[res.group.server] : "",
        name,
        fmtBytes(bytes),
        fmtInt(r.requestsPerSec),
        fmtMs(r.p50),
        fmtMs(r.p99),
        fmtCpuUs(run.cpu),
        fmtCoreShare(run.share),
        `${r.requests ? Math.round((100 * r.non2xx) / r.requests) : 0}%`,
        i === 0 ? "" : fmtX(rpsVs200(run, res.baseline)),
        i === 0 ? "" : fmtX(cpuVs200(run, res.baseline)),
      ]);
    }
  }
  const legend = [
    "  Each server's 200 (GET <product>?apikey=<valid key>, no Accept-Encoding) and its rejections, interleaved in the same rounds;",
    "  median round by req/s. x/200: the ratio to the 200 run of the same round, the median over the rounds. body: the response",
    "  body (problem+json for the rejections). non-2xx: share of wrk's completed requests.",
    "  401 missing key: <product> without apikey. 401 invalid key: a well-formed 32-character key that is not valid; after 10 failures",
    '    an address is locked out (1 a second after that): every attempt with a key that is not valid is a 401 "too many failed',
    '    attempts" (the key is looked up first: valid keys are still served), and one a second is counted. "not locked out": a handler child whose authFailureLimit',
    "    is 1e9/s, so every attempt is checked (the same unknown key is hashed once, then remembered). 429: a key limited to " +
      `${SLOW_KEY_LIMIT.rate}/s, burst ${SLOW_KEY_LIMIT.burst} (its target is remembered after`,
    `    the first 200). 404: ${"/v1/products/999999999/detail.json"} with the valid key. After a locked-out run the benchmark waits ${LOCKOUT_WAIT_MS / 1000} s`,
    "    (the address's failure bucket refills). The 200s are measured after the invalid-key checks; a valid key never looks up",
    "    the address's failure bucket.",
  ];
  const notes = results.flatMap((res) => res.group.cases.map((c) => `  ${c.label}: checked: ${c.checkNote}`));
  return renderReportTable({ header, right, rows, legend, notes });
}

/** A rejection run's statuses: every answer non-2xx, but the 429 key's allowance (its burst, then its rate). */
function statusProblem(c: RejectCase, run: Run, seconds: number): string | null {
  const ok = run.r.requests - run.r.non2xx;
  const allowed = c.okPerSecond > 0 ? Math.ceil(c.okPerSecond * (seconds + 1)) + SLOW_KEY_LIMIT.burst : 0;
  return ok > allowed
    ? `${c.label}: ${fmtInt(ok)} 2xx of ${fmtInt(run.r.requests)} (at most ${allowed} expected)`
    : null;
}

/** One line per rejection (CPU us/req <= the 200's from the same server and run), then the statuses seen. */
export function renderRejectVerdicts(results: readonly RejectResult[], duration: number): Verdict[] {
  const out: Verdict[] = [];
  const problems: string[] = [];
  for (const res of results) {
    const base = res.baseline;
    if (base.r.non2xx + base.r.socketErrors > 0)
      problems.push(
        `${REJECT_SERVER_NAMES[res.group.server]} 200: ${base.r.non2xx} non-2xx${base.r.socketErrors ? `, socket errors ${base.r.socketErrorDetail}` : ""}`,
      );
    for (const c of res.group.cases) {
      const run = res.runs.get(c.label);
      if (!run) continue;
      const p = statusProblem(c, run, duration);
      if (p) problems.push(p);
      if (run.r.socketErrors) problems.push(`${c.label}: socket errors ${run.r.socketErrorDetail}`);
      const cr = cpuVs200(run, base);
      const rr = rpsVs200(run, base);
      if (cr === null) {
        out.push({
          pass: false,
          line: `FAIL  ${c.label}: CPU us/req <= the 200 product's: no CPU figures (/proc not readable)`,
        });
        continue;
      }
      const pass = cr <= 1;
      out.push({
        pass,
        line: `${pass ? "PASS" : "FAIL"}  ${c.label}: CPU us/req <= the 200 product's (same server, same rounds): ${run.cpu!.toFixed(1)} vs ${base.cpu!.toFixed(1)} (${cr.toFixed(2)}x, the median of the rounds' ratios); req/s ${fmtInt(run.r.requestsPerSec)} vs ${fmtInt(base.r.requestsPerSec)} (${fmtX(rr)})`,
      });
    }
  }
  if (results.length) {
    out.push({
      pass: problems.length === 0,
      line: `${problems.length ? "FAIL" : "PASS"}  rejection runs got their statuses: the 200s all 2xx, the rejections all non-2xx (the 429 key: at most its burst plus ${SLOW_KEY_LIMIT.rate} 2xx a second), no socket errors${problems.length ? ` (${problems.join("; ")})` : ""}`,
    });
  }
  const starved = results.flatMap((res) =>
    [
      ["200", res.baseline] as const,
      ...res.group.cases.flatMap((c) => (res.runs.has(c.label) ? [[c.short, res.runs.get(c.label)!] as const] : [])),
    ]
      .filter(([, r]) => r.share !== undefined && r.share < MIN_CORE_SHARE)
      .map(([name, r]) => `${REJECT_SERVER_NAMES[res.group.server]}/${name} ${(r.share! * 100).toFixed(0)}%`),
  );
  if (starved.length)
    out.push({
      pass: true,
      line: `WARN  in ${starved.length} rejection measurement(s) the server used less than ${MIN_CORE_SHARE * 100}% of its core (${starved.join(", ")}): req/s is unreliable there; CPU us/req is the steadier guide`,
    });
  return out;
}
