// `npm run bench -- limits [--duration 5] [--rounds 3] [--warmup 2] [--connections 64] [--window 10] [--products N]`:
// rate limits shared through Redis (REDIS_URL, a real redis-server on a free loopback port) against in-memory ones.
//
// 1. Cost. The server as deployed (src/cli/serve.ts, request logs to a file, metrics on), pinned to core 0, wrk on
//    core 1: a product detail with a key within its limit (200s) and with a key far over it (429s), each with
//    in-memory limits and with Redis, interleaved rounds, median round: req/s, server CPU per request, Redis calls.
// 2. Accuracy. WORKERS=2 (both cores, unpinned): wrk sends a key far more than its limit for --window seconds; what
//    the two workers granted together against the key's allowance (burst + rate x seconds), with in-memory limits
//    (each worker its own bucket: about 2x) and with Redis (target: within 10% of 1x).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createKey } from "../src/keys/keys-file.ts";
import { SERVER_NODE_FLAGS } from "../src/serve/http/server.ts";
import { freePort } from "../scripts/lib/server-child.ts";
import { startDeployedOn } from "./lib/servers.ts";
import type { DeployedServer } from "./lib/servers.ts";
import { measureInterleaved } from "./lib/rounds.ts";
import type { Stream } from "./lib/rounds.ts";
import { prepareSnapshot } from "./lib/snapshot.ts";
import { fmtCpuUs, fmtInt, fmtMs, fmtX } from "./lib/report.ts";
import { runWrk } from "./lib/wrk.ts";

const HOST = "127.0.0.1";
const REPO = join(import.meta.dirname, "..");
const { values: opts } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "64" },
    window: { type: "string", default: "10" },
    products: { type: "string", default: "6000" },
  },
});
const duration = Number(opts.duration);
const windowSec = Number(opts.window);
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

/** A redis-server on a free loopback port, no persistence, pinned to `core`; with its command counts. */
async function startRedis(core: number | null) {
  const port = await freePort();
  const args = ["--port", String(port), "--bind", HOST, "--save", "", "--appendonly", "no"];
  const child =
    core === null
      ? spawn("redis-server", args, { stdio: ["ignore", "pipe", "inherit"] })
      : spawn("taskset", ["-c", String(core), "redis-server", ...args], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("Ready to accept connections")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
  });
  const cli = async (...argv: string[]) => {
    const p = spawn("redis-cli", ["-p", String(port), ...argv], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c: Buffer) => (out += c.toString()));
    await once(p, "exit");
    return out;
  };
  return {
    url: `redis://${HOST}:${port}`,
    /** Scripts run so far (EVALSHA and EVAL): one per reservation. */
    scriptCalls: async () => {
      const stats = await cli("info", "commandstats");
      return [...stats.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
    },
    version: async () => /redis_version:(\S+)/.exec(await cli("info", "server"))?.[1] ?? "?",
    stop: async () => {
      child.kill("SIGKILL");
      await once(child, "exit");
    },
  };
}

async function main(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), "bench-limits-"));
  const stops: (() => Promise<void>)[] = [];
  try {
    log(`building a ${opts.products}-product sample snapshot ...`);
    const snap = await prepareSnapshot(workDir, {
      baseUrl: "https://api.example.test",
      products: Number(opts.products),
      log,
    });
    // Over its limit by far: 100 a second against tens of thousands sent.
    const overKey = await createKey(snap.keysFile, "over", new Date(), { rate: 100, burst: 100 });
    const redis = await startRedis(1);
    stops.push(redis.stop);
    log(`redis-server ${await redis.version()} at ${redis.url}, pinned to core 1 with wrk`);

    const deployed = (name: string, core: number | null, env: Record<string, string>): Promise<DeployedServer> =>
      startDeployedOn(snap, { cwd: REPO, workDir, name, host: HOST, core, nodeArgs: SERVER_NODE_FLAGS, env });

    // --- 1. Cost, one core ---
    const METRICS = { METRICS_TOKEN: "bench-metrics-token-0123456789" };
    const memory = await deployed("memory", 0, METRICS);
    stops.push(() => memory.stop());
    const shared = await deployed("redis", 0, { ...METRICS, REDIS_URL: redis.url });
    stops.push(() => shared.stop());
    if (!/rate limits shared through Redis/.test(shared.stderr())) {
      await new Promise((r) => setTimeout(r, 1_000));
      if (!/rate limits shared through Redis/.test(shared.stderr())) throw new Error(`no Redis: ${shared.stderr()}`);
    }
    const streams: Stream[] = [];
    for (const [server, limits] of [
      [memory, "in-memory"],
      [shared, "redis"],
    ] as const) {
      for (const [key, what] of [
        [snap.key, "200 (within its limit)"],
        [overKey, "429 (over its limit)"],
      ] as const) {
        streams.push({
          name: `${what}, ${limits}`,
          url: `http://${HOST}:${server.port}${snap.product.path}?apikey=${key}`,
          pid: server.pid,
          headers: {},
        });
      }
    }
    const calls: Record<string, number> = {};
    const wrk: typeof runWrk = async (url, o) => {
      const before = await redis.scriptCalls();
      const r = await runWrk(url, o);
      calls[url] = ((await redis.scriptCalls()) - before) / o.duration;
      return r;
    };
    const runs = await measureInterleaved(streams, {
      wrk,
      core: 1,
      connections: Number(opts.connections),
      duration,
      warmup: Number(opts.warmup),
      rounds: Number(opts.rounds),
      offset: 0,
      label: "limits",
      log,
    });

    // --- 2. Accuracy, two workers ---
    const window = async (env: Record<string, string>, key: string) => {
      const server = await deployed("workers", null, { WORKERS: "2", ...env });
      try {
        if (env.REDIS_URL) {
          for (let i = 0; i < 50 && (server.stderr().match(/rate limits shared through Redis/g) ?? []).length < 2; i++)
            await new Promise((r) => setTimeout(r, 100));
        }
        const r = await runWrk(`http://${HOST}:${server.port}${snap.product.path}?apikey=${key}`, {
          core: null,
          connections: 32,
          duration: windowSec,
          headers: {},
        });
        const m = /requests in ([\d.]+)(ms|s|m)\b/.exec(r.raw);
        const seconds = m ? Number(m[1]) * (m[2] === "ms" ? 0.001 : m[2] === "m" ? 60 : 1) : windowSec;
        return { granted: r.requests - r.non2xx, sent: r.requests, seconds };
      } finally {
        await server.stop();
      }
    };
    const accuracy: { limits: string; rate: number; burst: number; granted: number; sent: number; allowed: number }[] =
      [];
    for (const [rate, burst] of [
      [2000, 2000],
      [50, 200],
    ] as const) {
      for (const limits of ["in-memory", "redis"] as const) {
        const key = await createKey(snap.keysFile, `window-${rate}-${limits}`, new Date(), { rate, burst });
        log(`${windowSec} s at a key of ${rate}/s (burst ${burst}), WORKERS=2, ${limits} ...`);
        const w = await window(limits === "redis" ? { REDIS_URL: redis.url } : {}, key);
        accuracy.push({ limits, rate, burst, granted: w.granted, sent: w.sent, allowed: burst + rate * w.seconds });
      }
    }

    // --- report ---
    const lines: string[] = [];
    lines.push(
      `## Rate limits: Redis (REDIS_URL) against in-memory`,
      ``,
      `Server as deployed (src/cli/serve.ts, logs to a file, metrics on), core 0; wrk -t1 -c${opts.connections} -d${duration}s on core 1 with redis-server; ${opts.rounds} interleaved rounds, median.`,
      ``,
      `| case | req/s | p99 ms | CPU us/req | Redis calls/s | req/s vs in-memory | CPU vs in-memory |`,
      `|---|---|---|---|---|---|---|`,
    );
    for (const s of streams) {
      const run = runs.get(s.name)!;
      const base = runs.get(s.name.replace("redis", "in-memory"))!;
      const isRedis = s.name.endsWith("redis");
      lines.push(
        `| ${s.name} | ${fmtInt(run.r.requestsPerSec)} | ${fmtMs(run.r.p99)} | ${fmtCpuUs(run.cpu)} | ${fmtInt(calls[s.url] ?? 0)} | ${isRedis ? fmtX(run.r.requestsPerSec / base.r.requestsPerSec) : ""} | ${isRedis && run.cpu && base.cpu ? fmtX(run.cpu / base.cpu) : ""} |`,
      );
    }
    lines.push(
      ``,
      `WORKERS=2 (unpinned), wrk -t1 -c32 -d${windowSec}s with one key far over its limit: granted (200s) by both workers together against the allowance (burst + rate x seconds). Target with Redis: within 10% of 1.00x.`,
      ``,
      `| limits | key rate/s, burst | sent | granted | allowed | granted/allowed | within 10% |`,
      `|---|---|---|---|---|---|---|`,
    );
    for (const a of accuracy) {
      const ratio = a.granted / a.allowed;
      lines.push(
        `| ${a.limits} | ${a.rate}, ${a.burst} | ${fmtInt(a.sent)} | ${fmtInt(a.granted)} | ${fmtInt(a.allowed)} | ${fmtX(ratio)} | ${a.limits === "redis" ? (Math.abs(ratio - 1) <= 0.1 ? "PASS" : "FAIL") : "(per worker: about 2x expected)"} |`,
      );
    }
    process.stdout.write(lines.join("\n") + "\n");
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
