// Measuring request streams against each other in interleaved rounds: each run warmed up first, each stream's figures
// those of its median round (by req/s), with the server's CPU time per request; ratios between two streams are taken
// within each round and their median reported (pairedRatio). On a shared machine load drifts over minutes, and
// back-to-back runs minutes apart disagree by more than the 10% being measured.
import { cpuSeconds, cpuSteal } from "../../scripts/lib/proc.ts";
import { runWrk } from "./wrk.ts";
import type { WrkOptions, WrkResult } from "./wrk.ts";

/** One stream of requests to one server process. */
export interface Stream {
  /** Its name in progress lines and in the result map. */
  name: string;
  url: string;
  /** The server process, for its CPU time. */
  pid: number;
  headers: Record<string, string>;
  /** Writes a new wrk Lua script for each run (warm-ups included) and returns its file. Default none. */
  script?: () => Promise<string>;
  /** Awaited after each of its runs, warm-ups included (e.g. until the address's failure limit has refilled). */
  after?: () => Promise<void>;
  /**
   * Waits for the server to go idle before each run and after it, and counts its CPU time until then: work a run
   * leaves (queued requests, background compression) is its cost, and would slow the next run. Default false.
   */
  settle?: boolean;
}

export interface Run {
  r: WrkResult;
  /** Server CPU time (user + system) per request, microseconds (until idle again for a `settle` stream). */
  cpu?: number;
  /** Server CPU time during the run over its wall time. */
  share?: number;
  /** The machine's CPU time stolen by the hypervisor during the run, over all its CPU time (both cores). */
  steal?: number;
  /** For a `settle` stream: seconds the server stayed busy after wrk stopped, and whether it went idle in time. */
  tailSec?: number;
  settled?: boolean;
  /** On a median run: every run of the stream, by round. */
  byRound?: Run[];
}

export interface MeasureOptions {
  /** Runs wrk: runWrk by default; the serve benchmark passes one that also counts what each server was sent. */
  wrk?: (url: string, options: WrkOptions) => Promise<WrkResult>;
  core: number | null;
  connections: number;
  duration: number;
  warmup: number;
  rounds: number;
  /** Shifts which stream goes first in each round (the case's index), so that drifting load favours none. */
  offset: number;
  /** The case, for progress lines. */
  label: string;
  log: (message: string) => void;
}

/** Longest wait for a `settle` stream's server to go idle (under 10% of a core over 250 ms). */
export const SETTLE_MAX_SEC = 15;

/** Waits until `pid` is idle, for at most SETTLE_MAX_SEC; at once where /proc is not readable. */
async function waitUntilIdle(pid: number): Promise<{ waitedSec: number; idle: boolean }> {
  const started = performance.now();
  const waited = () => (performance.now() - started) / 1000;
  for (let before = cpuSeconds(pid), after = before; before !== null && after !== null; before = after) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    after = cpuSeconds(pid);
    if (after !== null && after - before < 0.025 /* 10% of 250 ms */) break;
    if (waited() >= SETTLE_MAX_SEC) return { waitedSec: waited(), idle: false };
  }
  return { waitedSec: waited(), idle: true };
}

/**
 * Each round runs every stream once (a warm-up, then the measured run), starting from a different stream each round;
 * returns each stream's median round by req/s, with all its rounds as `byRound`.
 */
export async function measureInterleaved(streams: readonly Stream[], o: MeasureOptions): Promise<Map<string, Run>> {
  const runs = new Map<string, Run[]>(streams.map((s) => [s.name, []]));
  for (let round = 0; round < o.rounds; round++) {
    const k = (o.offset + round) % streams.length;
    for (const s of [...streams.slice(k), ...streams.slice(0, k)]) {
      const wrk = async (duration: number) => {
        const script = s.script ? { script: await s.script() } : {};
        return (o.wrk ?? runWrk)(s.url, {
          core: o.core,
          connections: o.connections,
          headers: s.headers,
          duration,
          ...script,
        });
      };
      if (s.settle) await waitUntilIdle(s.pid);
      if (o.warmup > 0) {
        await wrk(o.warmup);
        await s.after?.();
        if (s.settle) await waitUntilIdle(s.pid);
      }
      const [cpuBefore, wallBefore, stealBefore] = [cpuSeconds(s.pid), performance.now(), cpuSteal()];
      const r = await wrk(o.duration);
      const [cpuRun, wall, stealAfter] = [cpuSeconds(s.pid), (performance.now() - wallBefore) / 1000, cpuSteal()];
      const tail = s.settle ? await waitUntilIdle(s.pid) : null;
      const cpuAfter = tail ? cpuSeconds(s.pid) : cpuRun;
      await s.after?.();
      const run: Run = { r, ...(tail && { tailSec: tail.waitedSec, settled: tail.idle }) };
      if (stealBefore && stealAfter && stealAfter.total > stealBefore.total)
        run.steal = (stealAfter.steal - stealBefore.steal) / (stealAfter.total - stealBefore.total);
      if (cpuBefore !== null && cpuRun !== null && cpuAfter !== null && r.requests > 0) {
        run.cpu = ((cpuAfter - cpuBefore) * 1e6) / r.requests;
        run.share = (cpuRun - cpuBefore) / wall;
      }
      runs.get(s.name)!.push(run);
      const busy = tail ? `  busy ${tail.waitedSec.toFixed(1)} s after${tail.idle ? "" : " (still busy)"}` : "";
      const steal = run.steal !== undefined ? `  steal ${(run.steal * 100).toFixed(1)}%` : "";
      o.log(
        `${o.label.padEnd(26)} ${s.name.padEnd(13)} round ${round + 1}/${o.rounds}: ${Math.round(r.requestsPerSec).toString().padStart(7)} req/s  p99 ${r.p99.toFixed(2)} ms  ${run.cpu?.toFixed(1) ?? "?"} CPU us/req  ${((run.share ?? 0) * 100).toFixed(0)}% of core${steal}${busy}`,
      );
    }
  }
  return new Map([...runs].map(([name, list]) => [name, medianRun(list)]));
}

const median = <T>(list: readonly T[], by: (x: T) => number): T | undefined =>
  [...list].sort((x, y) => by(x) - by(y))[Math.floor((list.length - 1) / 2)];

/** A stream's median run by req/s, with every run it made (one a round) as its byRound. */
export function medianRun(list: readonly Run[]): Run {
  return { ...median(list, (x) => x.r.requestsPerSec)!, byRound: list.map(({ byRound: _, ...run }) => run) };
}

/**
 * The median, over the rounds both streams ran, of `a`'s figure over `b`'s in the same round (null when no round
 * has both). Each round runs the two back to back, so load that drifts from round to round (on this machine one
 * server measured 71k to 88k req/s from one round to the next) cancels out of each ratio; the ratio of the two
 * medians does not cancel it.
 */
export function pairedRatio(a: Run | undefined, b: Run | undefined, figure: (run: Run) => number | undefined) {
  const ratios = (a?.byRound ?? []).flatMap((x, i) => {
    const [p, q] = [figure(x), b?.byRound?.[i] && figure(b.byRound[i])];
    return p !== undefined && q ? [p / q] : [];
  });
  return median(ratios, (x) => x) ?? null;
}
