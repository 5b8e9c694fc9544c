// Server processes for the benchmarks: the machine checked first (wrk, taskset, bench/node_modules), a server script
// started (pinned to a core) and awaited until it listens, and the server as deployed with its request log in a file.
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, createReadStream, existsSync, openSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { serveListening } from "../../scripts/lib/server-child.ts";
import { spawnReady } from "../../scripts/lib/spawn-ready.ts";
import type { ReadyChild } from "../../scripts/lib/spawn-ready.ts";

export type ServerChild = ReadyChild;

const onPath = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;

/**
 * Throws with the command to run when wrk or taskset is missing; installs bench/node_modules itself when it can.
 * Returns the cores to pin the servers and wrk to (null on a single core: no pinning), and notes for the report.
 */
export function preflight(repoRoot: string): { cores: { server: number; wrk: number } | null; notes: string[] } {
  const notes: string[] = [];
  if (!onPath("wrk")) throw new Error("wrk is not installed. On Debian/Ubuntu: sudo apt-get install -y wrk");
  const benchDir = join(repoRoot, "bench");
  if (!existsSync(join(benchDir, "node_modules", "serve-handler", "package.json"))) {
    process.stderr.write("bench: bench/node_modules is missing serve-handler; running npm ci --prefix bench ...\n");
    try {
      execFileSync("npm", ["ci", "--prefix", benchDir], { stdio: ["ignore", "inherit", "inherit"], cwd: repoRoot });
    } catch {
      throw new Error("could not install the benchmark's dependencies: run `npm ci --prefix bench` and try again");
    }
    notes.push("installed bench/node_modules (npm ci --prefix bench)");
  }
  const cores = availableParallelism();
  if (cores < 2) {
    notes.push(`only ${cores} core: server and wrk are NOT pinned apart, figures are not comparable to the targets`);
    return { cores: null, notes };
  }
  if (!onPath("taskset")) throw new Error("taskset is not installed. On Debian/Ubuntu: apt-get install -y util-linux");
  return { cores: { server: 0, wrk: 1 }, notes };
}

/** `uptime` output (load averages), to judge how noisy the run's figures may be. */
export function loadNote(): string {
  try {
    return execFileSync("uptime", { encoding: "utf8" }).trim();
  } catch {
    return "(uptime unavailable)";
  }
}

export interface SpawnOptions {
  /** Core to pin the process to (taskset -c), or null to leave it unpinned. */
  core: number | null;
  /** Working directory (the repository root, so that `--import tsx` resolves). */
  cwd: string;
  /** Options for node. Default none. */
  nodeArgs?: readonly string[];
  /** Environment variables added to ours. Default none. */
  env?: Record<string, string>;
  /** How long it may take to listen. Default 60 s. */
  readyTimeoutMs?: number;
  /** SIGTERM to SIGKILL. Default 5 s. */
  stopTimeoutMs?: number;
}

/**
 * Runs `node [nodeArgs] --import tsx <script> <args>` (pinned with taskset when a core is given, NODE_ENV=production)
 * and resolves once it prints `READY <port>` on stdout; fails with its stderr if it exits or times out first.
 */
export function spawnServer(name: string, script: string, args: readonly string[], o: SpawnOptions) {
  return spawnReady({
    name: `${name} server`,
    script,
    scriptArgs: args,
    cwd: o.cwd,
    nodeArgs: o.nodeArgs,
    env: { ...process.env, NODE_ENV: "production", ...o.env },
    core: o.core,
    ready: { stream: "stdout", pattern: /^READY (\d+)$/m },
    readyTimeoutMs: o.readyTimeoutMs ?? 60_000,
    stopGraceMs: o.stopTimeoutMs ?? 5_000,
  });
}

export interface DeployedServer extends ServerChild {
  /** Where its stdout (the request log) goes. */
  logFile: string;
}

/** The variables src/config/api-settings.ts reads: none is inherited from the benchmark's own environment. */
const CONFIG_VARS =
  `PORT HOST DATA_DIR KEYS_FILE BASE_URL MAX_AGE LOG_REQUESTS WAIT_FOR_SNAPSHOT TRUST_PROXY METRICS_TOKEN
  REDIS_URL WORKERS TLS_CERT TLS_KEY VARIANT_CACHE_MB BODY_CACHE_MB COMPRESS_SLOTS EDGE_FRONTS EDGE_KEY_HOLD EDGE_KEY_TTL`.split(
    /\s+/,
  );

/**
 * The server as operators run it (`npm run serve`: node <nodeArgs> --import tsx src/cli/serve.ts) on a benchmark
 * snapshot (its data and keys, an example base URL, port 0 on `host`), configured by its environment with `env` added
 * (LOG_REQUESTS, WORKERS, REDIS_URL ...), its stdout appended to <workDir>/<name>.log as `>> file` would; resolves once
 * it says on stderr that it listens, and gives it 15 s after SIGTERM to flush its log and exit.
 */
export async function startDeployedOn(
  snap: { dataDir: string; keysFile: string },
  o: Omit<SpawnOptions, "env"> & { workDir: string; name: string; host: string; env?: Record<string, string> },
): Promise<DeployedServer> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "production" };
  for (const name of CONFIG_VARS) delete env[name];
  Object.assign(env, { DATA_DIR: snap.dataDir, KEYS_FILE: snap.keysFile, PORT: "0", HOST: o.host }, o.env);
  env.BASE_URL ??= "https://api.example.test";
  const logFile = join(o.workDir, `${o.name}.log`);
  const out = openSync(logFile, "a");
  try {
    const server = await spawnReady({
      name: "as-deployed server (src/cli/serve.ts)",
      script: join(o.cwd, "src", "cli", "serve.ts"),
      cwd: o.cwd,
      nodeArgs: o.nodeArgs,
      env,
      core: o.core,
      ready: { stream: "stderr", pattern: serveListening(o.host) },
      stdout: out,
      readyTimeoutMs: o.readyTimeoutMs ?? 60_000,
      stopGraceMs: o.stopTimeoutMs ?? 15_000,
    });
    return { ...server, logFile };
  } finally {
    closeSync(out);
  }
}

/** A request log's lines, bytes, lines per HTTP status (`"status":NNN`) and lines without one. */
export async function countLogLines(file: string) {
  const count = { lines: 0, bytes: 0, statuses: new Map<number, number>(), other: 0 };
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    count.lines++;
    count.bytes += Buffer.byteLength(line) + 1;
    const status = /"status":(\d{3})\b/.exec(line)?.[1];
    if (status === undefined) count.other++;
    else count.statuses.set(Number(status), (count.statuses.get(Number(status)) ?? 0) + 1);
  }
  return count;
}
