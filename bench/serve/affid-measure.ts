// Measuring the affid cases: the handler with a new affid on every request vs the same resource without, interleaved.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cpuSeconds } from "../../scripts/lib/proc.ts";
import { parseEncodings, renderAffidScript } from "./affid.ts";
import type { AffidCase, AffidMode } from "./affid.ts";
import { waitUntilIdle } from "./cpu.ts";
import { runWrk } from "./wrk.ts";
import type { WrkResult } from "./wrk.ts";

/**
 * Longest wait, after a run, for the handler to finish what the run left it (requests queued when wrk stopped,
 * compression in the background) before the next run starts; a server still busy then disturbs the next run.
 */
export const SETTLE_MAX_SEC = 15;

export interface AffidRun {
  wrk: WrkResult;
  /** CPU time per request, microseconds, from the run's start until the server went idle again (tail included). */
  cpuUs?: number;
  /** CPU time during the run over its wall time. */
  share?: number;
  /** Seconds the server stayed busy after wrk stopped, and whether it went idle within SETTLE_MAX_SEC. */
  tailSec: number;
  settled: boolean;
  encodings: ReturnType<typeof parseEncodings>;
}

export interface AffidResult {
  label: string;
  /** The plain body's decoded size. */
  bytes: number;
  note?: string;
  /** Problems the checks found that did not stop the measurement. */
  problems: string[];
  /** Each mode's median round (by req/s). */
  runs: Partial<Record<AffidMode, AffidRun>>;
  /** Runs (warm-ups included) after which the server was still busy after SETTLE_MAX_SEC. */
  unsettled: number;
}

export interface MeasureOptions {
  pid: number;
  /** The handler's base URL (`http://host:port`). */
  base: string;
  key: string;
  core: number | null;
  connections: number;
  duration: number;
  warmup: number;
  rounds: number;
  /** Where the wrk scripts are written. */
  dir: string;
  log: (message: string) => void;
}

/** Each case in `rounds` interleaved rounds of affid and plain (alternating which goes first), each mode by its median round. */
export async function measureAffid(cases: readonly AffidCase[], o: MeasureOptions): Promise<AffidResult[]> {
  const results: AffidResult[] = [];
  let script = 0;
  const stamp = Date.now().toString(36);
  const wrk = async (c: AffidCase, mode: AffidMode, seconds: number) => {
    const file = join(o.dir, `affid-${++script}.lua`);
    // A new prefix per wrk run: every affid in the whole benchmark is new to the server.
    await writeFile(file, renderAffidScript(c.path, o.key, mode === "affid" ? `r${script}-${stamp}-` : null));
    return runWrk(`${o.base}/`, {
      core: o.core,
      connections: o.connections,
      headers: c.headers,
      duration: seconds,
      script: file,
    });
  };
  for (const [i, c] of cases.entries()) {
    const res: AffidResult = {
      label: c.label,
      bytes: c.plainIdentity.length,
      problems: [...c.problems],
      runs: {},
      unsettled: 0,
    };
    const runs: Partial<Record<AffidMode, AffidRun[]>> = {};
    const settle = async () => {
      const s = await waitUntilIdle(o.pid, { maxMs: SETTLE_MAX_SEC * 1000, pollMs: 250, idleShare: 0.1 });
      if (!s.idle) res.unsettled++;
      return s;
    };
    await settle();
    for (let round = 0; round < o.rounds; round++) {
      const order: AffidMode[] = (i + round) % 2 === 0 ? ["affid", "plain"] : ["plain", "affid"];
      for (const mode of order) {
        if (o.warmup > 0) {
          await wrk(c, mode, o.warmup);
          await settle();
        }
        const cpuBefore = cpuSeconds(o.pid);
        const wallBefore = performance.now();
        const r = await wrk(c, mode, o.duration);
        const wall = (performance.now() - wallBefore) / 1000;
        const cpuRun = cpuSeconds(o.pid);
        const s = await settle();
        const cpuAfter = cpuSeconds(o.pid);
        const run: AffidRun = { wrk: r, tailSec: s.waitedSec, settled: s.idle, encodings: parseEncodings(r.raw) };
        if (cpuBefore !== null && cpuRun !== null && cpuAfter !== null && r.requests > 0) {
          run.cpuUs = ((cpuAfter - cpuBefore) * 1e6) / r.requests;
          run.share = (cpuRun - cpuBefore) / wall;
        }
        (runs[mode] ??= []).push(run);
        o.log(
          `${c.label.padEnd(34)} ${mode.padEnd(5)} round ${round + 1}/${o.rounds}: ${Math.round(r.requestsPerSec).toString().padStart(7)} req/s  p99 ${r.p99.toFixed(2)} ms  ${run.cpuUs?.toFixed(1) ?? "?"} CPU us/req  ${((run.share ?? 0) * 100).toFixed(0)}% of core  busy ${s.waitedSec.toFixed(1)} s after${s.idle ? "" : " (still busy)"}`,
        );
      }
    }
    for (const [mode, list] of Object.entries(runs) as [AffidMode, AffidRun[]][]) {
      res.runs[mode] = [...list].sort((x, y) => x.wrk.requestsPerSec - y.wrk.requestsPerSec)[
        Math.floor((list.length - 1) / 2)
      ]!;
    }
    results.push(res);
  }
  return results;
}

/**
 * Seconds the affid cases are expected to take: per case and round, a warm-up and a run of each mode, and the affid
 * mode's two waits for the handler to settle counted in full (the plain mode's take a fraction of a second).
 */
export function affidRunSeconds(cases: number, rounds: number, warmup: number, duration: number): number {
  return cases * rounds * (2 * (warmup + duration) + 2 * SETTLE_MAX_SEC);
}
