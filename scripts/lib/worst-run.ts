// Sends worst cases one at a time to a server process and measures each: the CPU time of the server's main thread
// (from /proc, so a busy machine does not inflate it), the wall time, the RSS it moved, and how long a /healthz sent
// meanwhile waited.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { buildRequest, KeepAliveConnection } from "./raw-http.ts";
import { rssMb } from "./proc.ts";
import type { WorstCase } from "./worst-cases.ts";

/** What one case cost. */
export interface WorstMeasure {
  case: WorstCase;
  status: number;
  /** CPU time of the server's main thread while the request was answered, in ms. */
  cpuMs: number;
  /** From the request's first byte sent to its response's last byte received, in ms. */
  wallMs: number;
  /** RSS after the response less RSS before the request, in MB. */
  rssMb: number;
  /** How long a /healthz sent right after the request waited for its answer, in ms. */
  healthMs: number;
}

/** CPU time of a process's main thread so far, in ms (Linux: /proc/PID/task/PID/schedstat, nanoseconds). */
function mainThreadCpuMs(pid: number): number {
  const [ns] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ");
  return Number(ns) / 1e6;
}

/** Sends each case to the server on `port` (process `pid`) and measures it; `onCase` sees each result as it comes. */
export async function runWorstCases(
  port: number,
  pid: number,
  cases: readonly WorstCase[],
  onCase: (m: WorstMeasure) => void = () => undefined,
): Promise<WorstMeasure[]> {
  let conn = new KeepAliveConnection(port);
  let health = new KeepAliveConnection(port);
  const healthRequest = buildRequest("GET", "/healthz", [["Host", "127.0.0.1"]]);
  const out: WorstMeasure[] = [];
  try {
    for (const c of cases) {
      if (conn.closed) conn = new KeepAliveConnection(port);
      if (health.closed) health = new KeepAliveConnection(port);
      const request = buildRequest("GET", c.target, [["Host", "127.0.0.1"], ...(c.headers ?? [])]);
      const rssBefore = rssMb(pid);
      const cpuBefore = mainThreadCpuMs(pid);
      const t0 = performance.now();
      const answer = conn.send(request, false);
      const t1 = performance.now();
      const healthAnswer = await health.send(healthRequest, false).then(() => performance.now() - t1);
      const response = await answer;
      const wallMs = performance.now() - t0;
      const m: WorstMeasure = {
        case: c,
        status: response.status,
        cpuMs: mainThreadCpuMs(pid) - cpuBefore,
        wallMs,
        rssMb: rssMb(pid) - rssBefore,
        healthMs: healthAnswer,
      };
      out.push(m);
      onCase(m);
    }
  } finally {
    conn.close();
    health.close();
  }
  return out;
}

/** The measures that break a bound: a wrong status, more than `maxMs` of CPU, or more than `maxRssMb` of RSS moved. */
export function worstFailures(measures: readonly WorstMeasure[], maxMs: number, maxRssMb: number): string[] {
  const out: string[] = [];
  for (const m of measures) {
    const why: string[] = [];
    if (!m.case.expect.includes(m.status)) why.push(`status ${m.status}, expected ${m.case.expect.join(" or ")}`);
    if (m.cpuMs > maxMs) why.push(`${m.cpuMs.toFixed(1)} ms of server CPU (bound ${maxMs})`);
    if (m.rssMb > maxRssMb) why.push(`RSS moved ${m.rssMb.toFixed(1)} MB (bound ${maxRssMb})`);
    if (why.length > 0) out.push(`${m.case.name}: ${why.join("; ")}`);
  }
  return out;
}
