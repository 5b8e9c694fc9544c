// The as-deployed server's request log, judged: one line per request answered (within what was in flight when wrk
// stopped), its size, its statuses, and what the server said on stderr.
import type { DeployedServer, LogCount } from "./deployed.ts";
import type { Verdict } from "./report.ts";
import { fmtBytes, fmtInt } from "./table.ts";

/** What the benchmark sent one server. */
export interface SentCount {
  /** Requests wrk reports as completed (responses read), over all its runs, warm-ups included. */
  requests: number;
  runs: number;
  /** wrk's socket errors (connect, read, write, timeout), over all its runs. */
  socketErrors: number;
  /** Single requests (checks), each answered before the next. */
  checks: number;
}

/**
 * The log must have a line for every request wrk completed and every check, and may have more: when wrk stops a run it
 * closes its connections with at most one request in flight on each (wrk does not pipeline), and the server answers
 * and logs such a request though wrk never counts it. So lines - completed - checks is within [0, runs x connections],
 * widened by wrk's socket errors (a request whose connection failed may have been answered and logged too).
 */
export function renderLogVerdict(
  count: LogCount,
  sent: SentCount | undefined,
  connections: number,
  server: DeployedServer,
): Verdict[] {
  const s = sent ?? { requests: 0, runs: 0, socketErrors: 0, checks: 0 };
  const expected = s.requests + s.checks;
  const slack = s.runs * connections + s.socketErrors;
  const diff = count.lines - expected;
  const pass = diff >= 0 && diff <= slack;
  const statuses = [...count.statuses]
    .sort(([a], [b]) => a - b)
    .map(([st, n]) => `${st}: ${fmtInt(n)}`)
    .join(", ");
  const out: Verdict[] = [
    {
      pass,
      line: `${pass ? "PASS" : "FAIL"}  as-deployed request log has a line per request answered: ${fmtInt(count.lines)} lines; wrk completed ${fmtInt(s.requests)} requests in ${s.runs} runs, plus ${s.checks} single requests: ${fmtInt(expected)}; lines - that = ${fmtInt(diff)}, within [0, ${fmtInt(slack)}] (${s.runs} runs x ${connections} connections, at most one request in flight on each when wrk stops${s.socketErrors ? `, + ${fmtInt(s.socketErrors)} socket errors` : ""})`,
    },
    {
      pass: true,
      line: `info  as-deployed request log: ${fmtBytes(count.bytes)} (${count.lines ? Math.round(count.bytes / count.lines) : 0} B a line); lines by status: ${statuses || "none"}${count.other ? `; ${fmtInt(count.other)} lines without a status` : ""}; ${server.logFile}`,
    },
  ];
  const exited = server.exit();
  const exit = exited && (exited.signal ?? `code ${exited.code}`);
  if (exit !== "code 0")
    out.push({
      pass: false,
      line: `FAIL  the as-deployed server did not exit cleanly after SIGTERM (${exit ?? "still running"}): its last log lines may be lost`,
    });
  const said = server
    .stderr()
    .split("\n")
    .filter((l) => l.trim() && !/^serve: (listening on|SIGTERM|now serving)/.test(l));
  if (said.length)
    out.push({
      pass: true,
      line: `WARN  the as-deployed server wrote ${said.length} other line(s) on stderr, e.g.: ${said
        .slice(0, 3)
        .map((l) => l.slice(0, 300))
        .join(" | ")}`,
    });
  return out;
}
