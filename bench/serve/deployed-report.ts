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

/** One as-deployed server's request log and what it was sent. */
export interface ServedLog {
  server: DeployedServer;
  count: LogCount;
  sent: SentCount | undefined;
}

/**
 * Each log must have a line for every request wrk completed and every check, and may have more: when wrk stops a run
 * it closes its connections with at most one request in flight on each (wrk does not pipeline), and the server
 * answers and logs such a request though wrk never counts it. So lines - completed - checks is within
 * [0, runs x connections], widened by wrk's socket errors (a request whose connection failed may have been answered
 * and logged too). Every server's log is checked; the line reports their sums.
 */
export function renderLogVerdict(logs: readonly ServedLog[], connections: number): Verdict[] {
  const total = { lines: 0, expected: 0, slack: 0, requests: 0, runs: 0, checks: 0, socketErrors: 0, bytes: 0 };
  const statusTotals = new Map<number, number>();
  let other = 0;
  const failed: string[] = [];
  for (const { server, count, sent } of logs) {
    const s = sent ?? { requests: 0, runs: 0, socketErrors: 0, checks: 0 };
    const expected = s.requests + s.checks;
    const slack = s.runs * connections + s.socketErrors;
    const diff = count.lines - expected;
    if (diff < 0 || diff > slack)
      failed.push(
        `${server.logFile}: ${fmtInt(count.lines)} lines for ${fmtInt(expected)} requests (within [0, ${fmtInt(slack)}] more expected)`,
      );
    total.lines += count.lines;
    total.expected += expected;
    total.slack += slack;
    total.requests += s.requests;
    total.runs += s.runs;
    total.checks += s.checks;
    total.socketErrors += s.socketErrors;
    total.bytes += count.bytes;
    other += count.other;
    for (const [st, n] of count.statuses) statusTotals.set(st, (statusTotals.get(st) ?? 0) + n);
  }
  const pass = failed.length === 0;
  const statuses = [...statusTotals]
    .sort(([a], [b]) => a - b)
    .map(([st, n]) => `${st}: ${fmtInt(n)}`)
    .join(", ");
  const servers = logs.length === 1 ? "" : ` (${logs.length} servers, each checked)`;
  const out: Verdict[] = [
    {
      pass,
      line: `${pass ? "PASS" : "FAIL"}  as-deployed request log has a line per request answered${servers}: ${fmtInt(total.lines)} lines; wrk completed ${fmtInt(total.requests)} requests in ${total.runs} runs, plus ${total.checks} single requests: ${fmtInt(total.expected)}; lines - that = ${fmtInt(total.lines - total.expected)}, within [0, ${fmtInt(total.slack)}] (runs x ${connections} connections, at most one request in flight on each when wrk stops${total.socketErrors ? `, + ${fmtInt(total.socketErrors)} socket errors` : ""})${pass ? "" : `; ${failed.join("; ")}`}`,
    },
    {
      pass: true,
      line: `info  as-deployed request log: ${fmtBytes(total.bytes)} (${total.lines ? Math.round(total.bytes / total.lines) : 0} B a line); lines by status: ${statuses || "none"}${other ? `; ${fmtInt(other)} lines without a status` : ""}; ${logs.map((l) => l.server.logFile).join(", ")}`,
    },
  ];
  for (const { server } of logs) {
    const exited = server.exit();
    const exit = exited && (exited.signal ?? `code ${exited.code}`);
    if (exit !== "code 0")
      out.push({
        pass: false,
        line: `FAIL  an as-deployed server did not exit cleanly after SIGTERM (${exit ?? "still running"}): its last log lines may be lost (${server.logFile})`,
      });
    const said = server
      .stderr()
      .split("\n")
      .filter((l) => l.trim() && !/^serve: (listening on|SIGTERM|now serving)/.test(l));
    if (said.length)
      out.push({
        pass: true,
        line: `WARN  an as-deployed server wrote ${said.length} other line(s) on stderr, e.g.: ${said
          .slice(0, 3)
          .map((l) => l.slice(0, 300))
          .join(" | ")}`,
      });
  }
  return out;
}
