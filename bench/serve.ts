// Serve benchmark: every case family of bench/serve/, on one sample snapshot. handler.ts: pre-rendered GETs through our
// handler vs a bare node:http server (same bytes) vs serve-handler (same files); deployed.ts: the same through the
// server as `npm run serve` runs it (request logs on, to a file) vs bare; affid.ts: a new affid on every request vs the
// same resource without; metering.ts: as deployed with usage per key counted vs USAGE=0; reject.ts: rejections (401,
// 429, 404) vs a 200 from the same server.
// Run: npm run bench -- serve [--duration 5] [--rounds 3] [--warmup 2] [--startup-warmup 5] [--connections 64]
//        [--products N] [--seed N] [--cases a,b] [--reject-duration 3] [--reject-warmup 1] [--reject-rounds 5] [--profile] [--keep]
// --cases: only the cases whose label contains one of the comma-separated words (case-insensitive), e.g. --cases affid,
// --cases "as deployed:" (the as-deployed cases), --cases deployed (those and the as-deployed rejections), --cases reject.
// --reject-duration, --reject-warmup: seconds of each rejection case's runs (and of their 200s); default the smaller of
// 3 and --duration, and of 1 and --warmup. --reject-rounds: their rounds (default 5, at least --rounds).
// --startup-warmup: seconds of load each server gets once after starting, before its cases (default 5).
// A short run to see that everything works: --rounds 1 --duration 1 --warmup 0 --startup-warmup 1 --reject-rounds 1.
// Two commits (serve/commits.ts): --compare runs only the as-deployed product detail, from the working tree and from
// --base <commit> (default: git merge-base HEAD main, checked out in a git worktree in the system's temp directory),
// beside bare, in fresh processes each round, and prints the ratio between them with its range (5 rounds unless
// --rounds says otherwise). --base implies --compare. --logs on|off|both (default on); --revs a,b,c measures more
// commits in the same rounds, each against bare; --keep-worktrees leaves the worktrees for the next run.
// --nice (the default with --compare; --no-nice to turn it off): the benchmark, its servers and wrk at nice -20 (root).
import { existsSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { cpus, setPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SERVER_NODE_FLAGS } from "../src/serve/http/server.ts";
import { runBench } from "./lib/check.ts";
import { summarizeProfiles } from "./lib/profile.ts";
import { fmtBytes } from "./lib/report.ts";
import { loadNote, preflight } from "./lib/servers.ts";
import { prepareSnapshot } from "./lib/snapshot.ts";
import { affidFamily } from "./serve/affid.ts";
import { compareCommits } from "./serve/commits.ts";
import { createServeBench } from "./serve/context.ts";
import type { ServeOptions } from "./serve/context.ts";
import { deployedFamily } from "./serve/deployed.ts";
import { handlerFamily } from "./serve/handler.ts";
import { meteringFamily } from "./serve/metering.ts";
import { rejectFamily } from "./serve/reject.ts";

/** The case families, in the order they run and report. */
const FAMILIES = [handlerFamily, deployedFamily, meteringFamily, affidFamily, rejectFamily];
const repoRoot = join(import.meta.dirname, "..");
/** The priority --nice gives the benchmark, its servers and wrk. */
const NICE = -20;
const AUTOGROUP = "/proc/self/autogroup";
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string" },
    warmup: { type: "string", default: "2" },
    "startup-warmup": { type: "string", default: "5" },
    connections: { type: "string", default: "64" },
    products: { type: "string" },
    seed: { type: "string", default: "1" },
    profile: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    cases: { type: "string", default: "" },
    "reject-duration": { type: "string" },
    "reject-rounds": { type: "string" },
    "reject-warmup": { type: "string" },
    compare: { type: "boolean", default: false },
    base: { type: "string" },
    revs: { type: "string", default: "" },
    logs: { type: "string", default: "on" },
    "keep-worktrees": { type: "boolean", default: false },
    nice: { type: "boolean", default: false },
    "no-nice": { type: "boolean", default: false },
  },
});
const compare = args.compare || args.base !== undefined;
if (!["on", "off", "both"].includes(args.logs)) throw new Error(`--logs ${args.logs}: on, off or both`);
const o: ServeOptions = {
  duration: Number(args.duration),
  warmup: Number(args.warmup),
  startupWarmup: Number(args["startup-warmup"]),
  // Two commits: more rounds by default, as their ratio is the only figure (and is judged by its range).
  rounds: Math.max(1, Number(args.rounds ?? (compare ? 5 : 3))),
  connections: Number(args.connections),
  // Rejections are many (each server's 200 and up to four rejections, every round): shorter runs keep the run
  // bounded. A rejection and its 200 cost within a few percent of each other, and one round's short runs spread by
  // about 5% either way: five rounds, so that one disturbed round does not decide.
  reject: {
    duration: Number(args["reject-duration"] ?? Math.min(3, Number(args.duration))),
    warmup: Number(args["reject-warmup"] ?? Math.min(1, Number(args.warmup))),
    rounds: Math.max(Number(args.rounds ?? 3), Number(args["reject-rounds"] ?? 5)),
  },
  profile: args.profile,
};
const filters = args.cases
  .split(",")
  .map((f) => f.trim().toLowerCase())
  .filter(Boolean);
/** Whether --cases selects the case with this label (every case without --cases). */
const wanted = (label: string) => filters.length === 0 || filters.some((f) => label.toLowerCase().includes(f));

async function main(): Promise<number> {
  const families = compare
    ? []
    : FAMILIES.map((f) => ({ f, n: f.labels.filter(wanted).length })).filter((x) => x.n > 0);
  if (!families.length && !compare)
    throw new Error(
      `--cases ${args.cases} selects no case; the cases are: ${FAMILIES.flatMap((f) => f.labels).join("; ")}`,
    );
  const pre = preflight(repoRoot);
  const loadAtStart = loadNote();
  // Servers and wrk inherit the benchmark's priority: raised (root only), other processes on their cores take little
  // of them. The default with --compare, whose ratios are otherwise spread over tens of percent on a busy machine.
  let priority = "as started (nice unchanged)";
  if ((args.nice || compare) && !args["no-nice"])
    try {
      setPriority(NICE);
      // With the kernel's autogroups (Linux, sched_autogroup_enabled), nice only orders the processes of one session:
      // the session's group gets the same priority against the others (other users' shells and test runs).
      const group = existsSync(AUTOGROUP) ? (writeFileSync(AUTOGROUP, String(NICE)), ", its autogroup too") : "";
      priority = `nice ${NICE}${group} (servers and wrk inherit it)`;
    } catch (err) {
      priority = `could not raise it (${(err as Error).message}): nice unchanged`;
    }
  const workDir = await mkdtemp(join(tmpdir(), "fsa-bench-serve-"));
  if (o.profile) await mkdir(join(workDir, "profile"));
  let stopAll = async () => {};
  try {
    log("writing the catalog and building the snapshot ...");
    const servers =
      (1 + (compare ? 1 + args.revs.split(",").filter(Boolean).length : 0)) * (args.logs === "both" ? 2 : 1);
    const seconds = compare
      ? 60 + o.rounds * servers * (o.startupWarmup + 3 + o.warmup + o.duration)
      : 30 + families.reduce((sum, { f, n }) => sum + f.seconds(o, n), 0);
    const snap = await prepareSnapshot(workDir, {
      baseUrl: "https://api.example.test",
      seed: Number(args.seed),
      // --compare measures the product detail only: the sale list may change meanwhile.
      stableFor: compare ? 0 : seconds,
      log,
      ...(args.products ? { products: Number(args.products) } : {}),
    });
    log(
      `built in ${(snap.buildMs / 1000).toFixed(1)} s; ${snap.catalogNote}; about ${Math.ceil(seconds / 60)} min to go`,
    );
    const ctx = createServeBench(o, snap, { repoRoot, workDir, cores: pre.cores }, log);
    stopAll = ctx.stopAll;
    const reports = [];
    for (const { f } of families) reports.push(await f.run(ctx.bench, wanted));
    if (compare)
      reports.push(
        await compareCommits(
          ctx.bench,
          { repoRoot, cores: pre.cores },
          {
            base: args.base ?? null,
            revs: args.revs.split(",").filter(Boolean),
            logs: args.logs === "both" ? ["on", "off"] : [args.logs as "on" | "off"],
            keepWorktrees: args["keep-worktrees"],
          },
        ),
      );

    const { product, list } = snap;
    const lines = [
      "",
      `serve benchmark: wrk -t1 -c${o.connections} -d${o.duration}s --latency after a ${o.warmup} s warm-up, each server warmed up once for ${o.startupWarmup} s after starting; the median of ${o.rounds} interleaved rounds; GET with a valid apikey`,
      `node options of every server: ${SERVER_NODE_FLAGS.join(" ") || "none"} (as npm run serve runs ours)`,
      `pinning: ${pre.cores ? `servers on core ${pre.cores.server}, wrk on core ${pre.cores.wrk} (taskset)` : "none"}; ${cpus().length} x ${cpus()[0]?.model ?? "unknown CPU"}; node ${process.version}`,
      `load at start: ${loadAtStart}; priority: ${priority}`,
      `load at end:   ${loadNote()}`,
      `input: ${snap.catalogNote}; snapshot built in ${(snap.buildMs / 1000).toFixed(1)} s`,
      `product: ${product.path} (${fmtBytes(product.identity.length)}, br ${fmtBytes(product.br.length)}); list: ${list.path} (${list.sales} sales, ${fmtBytes(list.size)}${list.stableForSec !== null ? `, unchanged for ${Math.floor(list.stableForSec / 60)} min after the build` : ""})`,
      ...pre.notes.map((n) => `note: ${n}`),
      ...(o.profile
        ? [
            "note: --profile: handlers ran under the sampling profiler, which slows them; judge the targets from a run without it",
          ]
        : []),
      ...reports.flatMap((r) => ["", r.text, "", ...r.verdicts.map((v) => v.line)]),
    ];
    process.stdout.write(lines.join("\n") + "\n");
    if (o.profile)
      process.stdout.write(
        `\nCPU profiles (handlers and bare servers from listening to exit; as-deployed servers from start to exit):\n${await summarizeProfiles(join(workDir, "profile"), repoRoot)}\n`,
      );
    return reports.every((r) => r.verdicts.every((v) => v.pass)) ? 0 : 2;
  } finally {
    await stopAll();
    if (args.keep) log(`kept ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

runBench(main, log);
