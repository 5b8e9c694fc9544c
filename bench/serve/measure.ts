// Measuring request streams against each other: each in `rounds` interleaved rounds, each run warmed up first, each
// stream's figures those of its median round (by req/s), with the server's CPU time per request; ratios between two
// streams are taken within each round and their median reported (pairedRatio).
import { cpuSeconds } from "../../scripts/lib/proc.ts";
import { runWrk } from "./wrk.ts";
import type { WrkOptions, WrkResult } from "./wrk.ts";

/** One stream of identical requests to one server process. */
export interface Stream {
  /** Its name in progress lines and in the result map. */
  name: string;
  url: string;
  /** The server process, for its CPU time. */
  pid: number;
  headers: Record<string, string>;
  /** Measured once, last in the first round (serve-handler, 4x off: one round says enough). Default false. */
  once?: boolean;
  /** Awaited after each of its runs, warm-ups included (e.g. until the address's failure limit has refilled). */
  after?: () => Promise<void>;
}

export interface Run {
  r: WrkResult;
  /** Server CPU time (user + system) per request, microseconds. */
  cpu?: number;
  /** Server CPU time over the run's wall time. */
  share?: number;
  /** On the median run measureInterleaved returns: every run of the stream, by round (a `once` stream has one). */
  byRound?: Run[];
}

export interface MeasureOptions {
  /** Runs wrk: runWrk by default; the benchmark passes one that also counts what each server was sent. */
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

/**
 * Each round runs every stream once (a warm-up, then the measured run), starting from a different stream each round;
 * returns each stream's median round by req/s. On a shared machine load drifts over minutes, and back-to-back runs
 * minutes apart disagree by more than the 10% being measured.
 */
export async function measureInterleaved(streams: readonly Stream[], o: MeasureOptions): Promise<Map<string, Run>> {
  const wrk = o.wrk ?? runWrk;
  const rotating = streams.filter((s) => !s.once);
  const once = streams.filter((s) => s.once);
  const runs = new Map<string, Run[]>();
  for (let round = 0; round < o.rounds; round++) {
    const k = rotating.length ? (o.offset + round) % rotating.length : 0;
    const order = [...rotating.slice(k), ...rotating.slice(0, k), ...(round === 0 ? once : [])];
    for (const s of order) {
      const wrkOpts = { core: o.core, connections: o.connections, headers: s.headers };
      if (o.warmup > 0) {
        await wrk(s.url, { ...wrkOpts, duration: o.warmup });
        await s.after?.();
      }
      const cpuBefore = cpuSeconds(s.pid);
      const wallBefore = performance.now();
      const r = await wrk(s.url, { ...wrkOpts, duration: o.duration });
      const wall = (performance.now() - wallBefore) / 1000;
      const cpuAfter = cpuSeconds(s.pid);
      await s.after?.();
      const run: Run = { r };
      if (cpuBefore !== null && cpuAfter !== null && r.requests > 0) {
        run.cpu = ((cpuAfter - cpuBefore) * 1e6) / r.requests;
        run.share = (cpuAfter - cpuBefore) / wall;
      }
      let list = runs.get(s.name);
      if (!list) runs.set(s.name, (list = []));
      list.push(run);
      const rounds = s.once ? 1 : o.rounds;
      o.log(
        `${o.label.padEnd(26)} ${s.name.padEnd(13)} round ${round + 1}/${rounds}: ${Math.round(r.requestsPerSec).toString().padStart(7)} req/s  p99 ${r.p99.toFixed(2)} ms  ${run.cpu?.toFixed(1) ?? "?"} CPU us/req  ${((run.share ?? 0) * 100).toFixed(0)}% of core`,
      );
    }
  }
  const medians = new Map<string, Run>();
  for (const [name, list] of runs) medians.set(name, medianRun(list));
  return medians;
}

/** A stream's median run by req/s, with every run it made (one a round) as its byRound. */
export function medianRun(list: readonly Run[]): Run {
  return { ...median(list, (x) => x.r.requestsPerSec)!, byRound: [...list] };
}

function median<T>(list: readonly T[], by: (x: T) => number): T | undefined {
  return [...list].sort((x, y) => by(x) - by(y))[Math.floor((list.length - 1) / 2)];
}

/**
 * The median, over the rounds both streams ran, of `a`'s figure over `b`'s in the same round (null when no round
 * has both). Each round runs the two back to back, so load that drifts from round to round (on this machine one
 * server measured 71k to 88k req/s from one round to the next) cancels out of each ratio; the ratio of the two
 * medians does not cancel it.
 */
export function pairedRatio(
  a: Run | undefined,
  b: Run | undefined,
  figure: (run: Run) => number | undefined,
): number | null {
  const ratios: number[] = [];
  const as = a?.byRound ?? [];
  const bs = b?.byRound ?? [];
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const x = figure(as[i]!);
    const y = figure(bs[i]!);
    if (x !== undefined && y !== undefined && y > 0) ratios.push(x / y);
  }
  return median(ratios, (x) => x) ?? null;
}
