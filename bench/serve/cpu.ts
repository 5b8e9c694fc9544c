// CPU time a process has used (user + system, all threads), from /proc: a cost per request that load on the
// other core, or a neighbour stealing this one now and then, disturbs far less than requests per second.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let ticksPerSecond: number | null = null;

function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU seconds used by `pid` so far, or null where /proc is not available. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start at field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return null;
  }
}

/**
 * Waits until `pid` is idle (under `idleShare` of a core over a `pollMs` window), for at most `maxMs`: a server
 * still busy with work a finished run left (queued requests, background compression) would slow the next run.
 * Resolves with the seconds waited and whether it went idle; at once (idle) where /proc is not available.
 */
export async function waitUntilIdle(pid: number, options: { maxMs: number; pollMs?: number; idleShare?: number }): Promise<{ waitedSec: number; idle: boolean }> {
  const pollMs = options.pollMs ?? 200;
  const idleShare = options.idleShare ?? 0.05;
  const started = performance.now();
  let before = cpuSeconds(pid);
  if (before === null) return { waitedSec: 0, idle: true };
  for (;;) {
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const after = cpuSeconds(pid);
    if (after === null) return { waitedSec: (performance.now() - started) / 1000, idle: true };
    const busy = (after - before) / ((performance.now() - t0) / 1000);
    before = after;
    const waitedSec = (performance.now() - started) / 1000;
    if (busy < idleShare) return { waitedSec, idle: true };
    if (waitedSec * 1000 >= options.maxMs) return { waitedSec, idle: false };
  }
}
