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
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SERVER_NODE_FLAGS } from "../src/serve/server.ts";
import { runBench } from "./lib/check.ts";
import { summarizeProfiles } from "./lib/profile.ts";
import { fmtBytes } from "./lib/report.ts";
import { loadNote, preflight } from "./lib/servers.ts";
import { prepareSnapshot } from "./lib/snapshot.ts";
import { affidFamily } from "./serve/affid.ts";
import { createServeBench } from "./serve/context.ts";
import type { ServeOptions } from "./serve/context.ts";
import { deployedFamily } from "./serve/deployed.ts";
import { handlerFamily } from "./serve/handler.ts";
import { meteringFamily } from "./serve/metering.ts";
import { rejectFamily } from "./serve/reject.ts";

/** The case families, in the order they run and report. */
const FAMILIES = [handlerFamily, deployedFamily, meteringFamily, affidFamily, rejectFamily];
const repoRoot = join(import.meta.dirname, "..");
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
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
  },
});
const o: ServeOptions = {
  duration: Number(args.duration),
  warmup: Number(args.warmup),
  startupWarmup: Number(args["startup-warmup"]),
  rounds: Math.max(1, Number(args.rounds)),
  connections: Number(args.connections),
  // Rejections are many (each server's 200 and up to four rejections, every round): shorter runs keep the run
  // bounded. A rejection and its 200 cost within a few percent of each other, and one round's short runs spread by
  // about 5% either way: five rounds, so that one disturbed round does not decide.
  reject: {
    duration: Number(args["reject-duration"] ?? Math.min(3, Number(args.duration))),
    warmup: Number(args["reject-warmup"] ?? Math.min(1, Number(args.warmup))),
    rounds: Math.max(Number(args.rounds), Number(args["reject-rounds"] ?? 5)),
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
  const families = FAMILIES.map((f) => ({ f, n: f.labels.filter(wanted).length })).filter((x) => x.n > 0);
  if (!families.length)
    throw new Error(
      `--cases ${args.cases} selects no case; the cases are: ${FAMILIES.flatMap((f) => f.labels).join("; ")}`,
    );
  const pre = preflight(repoRoot);
  const loadAtStart = loadNote();
  const workDir = await mkdtemp(join(tmpdir(), "fsa-bench-serve-"));
  if (o.profile) await mkdir(join(workDir, "profile"));
  let stopAll = async () => {};
  try {
    log("writing the catalog and building the snapshot ...");
    const seconds = 30 + families.reduce((sum, { f, n }) => sum + f.seconds(o, n), 0);
    const snap = await prepareSnapshot(workDir, {
      baseUrl: "https://api.example.test",
      seed: Number(args.seed),
      stableFor: seconds,
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

    const { product, list } = snap;
    const lines = [
      "",
      `serve benchmark: wrk -t1 -c${o.connections} -d${o.duration}s --latency after a ${o.warmup} s warm-up, each server warmed up once for ${o.startupWarmup} s after starting; the median of ${o.rounds} interleaved rounds; GET with a valid apikey`,
      `node options of every server: ${SERVER_NODE_FLAGS.join(" ") || "none"} (as npm run serve runs ours)`,
      `pinning: ${pre.cores ? `servers on core ${pre.cores.server}, wrk on core ${pre.cores.wrk} (taskset)` : "none"}; ${cpus().length} x ${cpus()[0]?.model ?? "unknown CPU"}; node ${process.version}`,
      `load at start: ${loadAtStart}`,
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
        `\nhandler CPU profiles (from listening to exit):\n${await summarizeProfiles(join(workDir, "profile"), repoRoot)}\n`,
      );
    return reports.every((r) => r.verdicts.every((v) => v.pass)) ? 0 : 2;
  } finally {
    await stopAll();
    if (args.keep) log(`kept ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

runBench(main, log);
