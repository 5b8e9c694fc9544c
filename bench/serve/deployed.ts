// The server as operators run it (`npm run serve`): `node <SERVER_NODE_FLAGS> --import tsx src/cli/serve.ts`,
// configured by its environment, request logs on stdout redirected to a file, and that file's lines counted after.
import { closeSync, createReadStream, openSync } from "node:fs";
import { join } from "node:path";
import { serveListening } from "../../scripts/lib/server-child.ts";
import { spawnReady } from "../../scripts/lib/spawn-ready.ts";
import type { ReadyChild } from "../../scripts/lib/spawn-ready.ts";

/** How long the server may take to load and listen. */
const READY_TIMEOUT_MS = 60_000;
/** How long it has after SIGTERM to finish, flush its logs and exit (it gives itself 10 s) before it is killed. */
const STOP_TIMEOUT_MS = 15_000;
/** The variables src/config.ts reads: none is inherited from the benchmark's own environment. */
const CONFIG_VARS = [
  "PORT",
  "HOST",
  "DATA_DIR",
  "KEYS_FILE",
  "BASE_URL",
  "MAX_AGE",
  "LOG_REQUESTS",
  "WAIT_FOR_SNAPSHOT",
  "TRUST_PROXY",
  "METRICS_TOKEN",
  "REDIS_URL",
  "WORKERS",
  "TLS_CERT",
  "TLS_KEY",
  "VARIANT_CACHE_MB",
  "BODY_CACHE_MB",
  "COMPRESS_SLOTS",
];

export interface DeployedServer extends ReadyChild {
  /** Where its stdout (the request log) goes. */
  logFile: string;
}

export interface DeployedOptions {
  /** The repository root. */
  cwd: string;
  core: number | null;
  /** node's options: SERVER_NODE_FLAGS, as `npm run serve` gives them. */
  nodeArgs: readonly string[];
  logFile: string;
  /** The server's configuration (PORT, HOST, DATA_DIR, ...). */
  env: Record<string, string>;
}

/** Starts src/cli/serve.ts and resolves once it prints `listening on http://<HOST>:<port>` on stderr. */
export async function startDeployed(o: DeployedOptions): Promise<DeployedServer> {
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: "production" };
  for (const name of CONFIG_VARS) delete env[name];
  Object.assign(env, o.env);
  // `>> file`, as operators run it: stdout is a file opened for appending, not a pipe to us.
  const out = openSync(o.logFile, "a");
  try {
    const server = await spawnReady({
      name: "as-deployed server (src/cli/serve.ts)",
      script: join(o.cwd, "src", "cli", "serve.ts"),
      cwd: o.cwd,
      nodeArgs: o.nodeArgs,
      env,
      core: o.core,
      ready: { stream: "stderr", pattern: serveListening(o.env.HOST ?? "127.0.0.1") },
      stdout: out,
      readyTimeoutMs: READY_TIMEOUT_MS,
      stopGraceMs: STOP_TIMEOUT_MS,
    });
    return { ...server, logFile: o.logFile };
  } finally {
    closeSync(out);
  }
}

export interface LogCount {
  lines: number;
  bytes: number;
  /** Lines per HTTP status, from each line's `"status":NNN`. */
  statuses: Map<number, number>;
  /** Lines without a `"status"` field (not request logs). */
  other: number;
}

/** Counts the lines of a request log and their statuses, streaming (the file may be hundreds of MB). */
export async function countLogLines(file: string): Promise<LogCount> {
  const count: LogCount = { lines: 0, bytes: 0, statuses: new Map(), other: 0 };
  const STATUS = /"status":(\d{3})\b/;
  let rest = "";
  const line = (text: string) => {
    count.lines++;
    const m = STATUS.exec(text);
    if (!m) count.other++;
    else count.statuses.set(Number(m[1]), (count.statuses.get(Number(m[1])) ?? 0) + 1);
  };
  for await (const chunk of createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 })) {
    const text = rest + (chunk as string);
    count.bytes += Buffer.byteLength(chunk as string);
    let start = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
      line(text.slice(start, nl));
      start = nl + 1;
    }
    rest = text.slice(start);
  }
  if (rest) line(rest); // a last line without its newline
  return count;
}

/**
 * The server as deployed on a benchmark snapshot (its data, keys, an example base URL, port 0 on `host`), request
 * logs to <workDir>/<name>.log, with `env` added (WORKERS, REDIS_URL, METRICS_TOKEN...).
 */
export function startDeployedOn(
  snap: { dataDir: string; keysFile: string },
  o: {
    cwd: string;
    workDir: string;
    name: string;
    host: string;
    core: number | null;
    nodeArgs: readonly string[];
    env?: Record<string, string>;
  },
): Promise<DeployedServer> {
  return startDeployed({
    cwd: o.cwd,
    core: o.core,
    nodeArgs: o.nodeArgs,
    logFile: join(o.workDir, `${o.name}.log`),
    env: {
      DATA_DIR: snap.dataDir,
      KEYS_FILE: snap.keysFile,
      PORT: "0",
      HOST: o.host,
      BASE_URL: "https://api.example.test",
      ...o.env,
    },
  });
}
