// `npm run bench -- workers [--products 100000] [--duration 10] [--rounds 3] [--connections 64]`: the server as
// deployed (src/cli/serve.ts, request logs to a file) with WORKERS=1 and WORKERS=2 on the same snapshot, unpinned:
// req/s for a product detail (wrk -t2, interleaved rounds, median), and the memory of the primary and each worker.
// On a 2-core machine wrk needs a core's worth of its own, so two workers cannot show twice one worker's rate.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SERVER_NODE_FLAGS } from "../src/serve/http/server.ts";
import { rssMb } from "../scripts/lib/proc.ts";
import { startDeployedOn } from "./lib/servers.ts";
import type { DeployedServer } from "./lib/servers.ts";
import { prepareSnapshot } from "./lib/snapshot.ts";
import { fmtInt, fmtMs, fmtX } from "./lib/report.ts";
import { runWrk } from "./lib/wrk.ts";
import type { WrkResult } from "./lib/wrk.ts";

const HOST = "127.0.0.1";
const REPO = join(import.meta.dirname, "..");
const { values: opts } = parseArgs({
  options: {
    products: { type: "string", default: "100000" },
    duration: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "64" },
  },
});
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

/** The worker processes of a primary: its children running serve.ts (tsx's esbuild service is a child too). */
function workerPids(primary: number): number[] {
  try {
    const out = execFileSync("pgrep", ["-P", String(primary), "-f", "serve.ts"], { encoding: "utf8" });
    return out.trim().split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function main(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), "bench-workers-"));
  const servers: DeployedServer[] = [];
  try {
    log(`building a ${opts.products}-product sample snapshot ...`);
    const snap = await prepareSnapshot(workDir, {
      baseUrl: "https://api.example.test",
      products: Number(opts.products),
      log,
    });
    const counts = [1, 2] as const;
    for (const workers of counts) {
      log(`starting the server as deployed with WORKERS=${workers} ...`);
      const server = await startDeployedOn(snap, {
        cwd: REPO,
        workDir,
        name: `workers-${workers}`,
        host: HOST,
        core: null,
        nodeArgs: SERVER_NODE_FLAGS,
        env: { WORKERS: String(workers) },
      });
      servers.push(server);
    }
    const url = (s: DeployedServer) => `http://${HOST}:${s.port}${snap.product.path}?apikey=${snap.key}`;
    const runs = new Map<number, WrkResult[]>(counts.map((w) => [w, []]));
    const wrk = (s: DeployedServer, duration: number) =>
      runWrk(url(s), { core: null, threads: 2, connections: Number(opts.connections), duration, headers: {} });
    for (let round = 0; round < Number(opts.rounds); round++) {
      for (const [i, workers] of (round % 2 ? [...counts].reverse() : counts).entries()) {
        const server = servers[counts.indexOf(workers)]!;
        await wrk(server, 2); // warm-up
        const r = await wrk(server, Number(opts.duration));
        runs.get(workers)!.push(r);
        log(`round ${round + 1}, ${i + 1}/2: WORKERS=${workers} ${fmtInt(r.requestsPerSec)} req/s`);
      }
    }
    const median = (rs: WrkResult[]) => [...rs].sort((a, b) => a.requestsPerSec - b.requestsPerSec)[rs.length >> 1]!;
    const one = median(runs.get(1)!);
    const lines = [
      `## WORKERS=1 against WORKERS=2 (${opts.products} products, ${availableParallelism()} cores)`,
      ``,
      `Server as deployed (request logs to a file), unpinned; wrk -t2 -c${opts.connections} -d${opts.duration}s on a product detail, unpinned; ${opts.rounds} interleaved rounds, median. RSS after the runs.`,
      ``,
      `| WORKERS | req/s | p50 ms | p99 ms | vs WORKERS=1 | RSS primary MB | RSS per worker MB | RSS total MB |`,
      `|---|---|---|---|---|---|---|---|`,
    ];
    for (const [i, workers] of counts.entries()) {
      const server = servers[i]!;
      const r = median(runs.get(workers)!);
      // WORKERS=1 runs the server in the one process; WORKERS=N has a primary and N worker processes.
      const pids = workers === 1 ? [] : workerPids(server.pid);
      const primary = rssMb(server.pid);
      const each = pids.map(rssMb);
      const total = primary + each.reduce((a, b) => a + b, 0);
      lines.push(
        `| ${workers} | ${fmtInt(r.requestsPerSec)} | ${fmtMs(r.p50)} | ${fmtMs(r.p99)} | ${fmtX(r.requestsPerSec / one.requestsPerSec)} | ${fmtInt(primary)}${workers === 1 ? " (the server)" : ""} | ${each.map(fmtInt).join(", ") || "-"} | ${fmtInt(total)} |`,
      );
    }
    lines.push(
      ``,
      `Each worker loads its own routes and search index and keeps its own caches, bodies read from the packs included (up to BODY_CACHE_MB; here one product's); the packs' pages are the system's page cache, shared by all. The primary holds none.`,
    );
    process.stdout.write(lines.join("\n") + "\n");
  } finally {
    for (const s of servers) await s.stop().catch(() => {});
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
