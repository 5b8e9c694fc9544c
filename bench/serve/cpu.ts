// Waiting for a server to go idle, by its CPU time from /proc (scripts/lib/proc.ts): a cost per request that load on
// the other core, or a neighbour stealing this one now and then, disturbs far less than requests per second.
import { cpuSeconds } from "../../scripts/lib/proc.ts";

/**
 * Waits until `pid` is idle (under `idleShare` of a core over a `pollMs` window), for at most `maxMs`: a server
 * still busy with work a finished run left (queued requests, background compression) would slow the next run.
 * Resolves with the seconds waited and whether it went idle; at once (idle) where /proc is not available.
 */
export async function waitUntilIdle(
  pid: number,
  options: { maxMs: number; pollMs?: number; idleShare?: number },
): Promise<{ waitedSec: number; idle: boolean }> {
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
