// Running wrk once (pinned to a core with taskset when given one) and parsing its --latency report.
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface WrkOptions {
  /** Core wrk is pinned to, or null for no pinning. */
  core: number | null;
  connections: number;
  /** Seconds. */
  duration: number;
  headers: Record<string, string>;
  /** wrk's threads (-t). Default 1. */
  threads?: number;
  /** A Lua script for wrk (`-s`), e.g. one that makes every request target distinct. Default none. */
  script?: string;
}

export interface WrkResult {
  requestsPerSec: number;
  /** Latency percentiles, milliseconds. */
  p50: number;
  p99: number;
  requests: number;
  /** Bytes read per second, as wrk reports it. */
  transferPerSec: number;
  non2xx: number;
  socketErrors: number;
  /** wrk's own line, e.g. "connect 0, read 0, write 0, timeout 64", or "" when there were none. */
  socketErrorDetail: string;
  raw: string;
}

/** Latency units to milliseconds, transfer units to bytes. */
const SCALE: Record<string, number> = {
  us: 0.001,
  ms: 1,
  s: 1000,
  m: 60_000,
  B: 1,
  KB: 1024,
  MB: 1024 ** 2,
  GB: 1024 ** 3,
};

/** Parses wrk 4's text report (run with --latency). */
export function parseWrk(raw: string): WrkResult {
  const need = (re: RegExp, what: string): RegExpExecArray => {
    const m = re.exec(raw);
    if (!m) throw new Error(`wrk: no ${what} in its output:\n${raw}`);
    return m;
  };
  const scaled = (m: RegExpExecArray) => Number(m[1]) * SCALE[m[2]!]!;
  const transfer = /^Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/m.exec(raw);
  const non2xx = /^\s+Non-2xx or 3xx responses:\s+(\d+)/m.exec(raw);
  const sock = /^\s+Socket errors: (connect (\d+), read (\d+), write (\d+), timeout (\d+))/m.exec(raw);
  return {
    requestsPerSec: Number(need(/^Requests\/sec:\s+([\d.]+)/m, "Requests/sec")[1]),
    p50: scaled(need(/^\s+50%\s+([\d.]+)(us|ms|s|m)\b/m, "50% latency")),
    p99: scaled(need(/^\s+99%\s+([\d.]+)(us|ms|s|m)\b/m, "99% latency")),
    requests: Number(need(/^\s+(\d+) requests in/m, "request count")[1]),
    transferPerSec: transfer ? scaled(transfer) : 0,
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: sock ? sock.slice(2, 6).reduce((sum, n) => sum + Number(n), 0) : 0,
    socketErrorDetail: sock ? sock[1]! : "",
    raw,
  };
}

/** Runs wrk once against `url`; one thread unless `threads` says more, `connections` keep-alive connections. */
export async function runWrk(url: string, options: WrkOptions): Promise<WrkResult> {
  const args = [`-t${options.threads ?? 1}`, `-c${options.connections}`, `-d${options.duration}s`, "--latency"];
  for (const [name, value] of Object.entries(options.headers)) args.push("-H", `${name}: ${value}`);
  if (options.script !== undefined) args.push("-s", options.script);
  args.push(url);
  const [cmd, argv] = options.core === null ? ["wrk", args] : ["taskset", ["-c", String(options.core), "wrk", ...args]];
  const { stdout } = await run(cmd, argv, { maxBuffer: 1 << 20, timeout: (options.duration + 30) * 1000 });
  return parseWrk(stdout);
}
