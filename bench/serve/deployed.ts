// The server as operators run it (`npm run serve`): `node <SERVER_NODE_FLAGS> --import tsx src/cli/serve.ts`,
// configured by its environment, request logs on stdout redirected to a file, and that file's lines counted after.
import { spawn } from "node:child_process";
import { closeSync, createReadStream, openSync } from "node:fs";
import { join } from "node:path";
import type { ServerChild } from "./children.ts";

/** How long the server may take to load and listen. */
const READY_TIMEOUT_MS = 60_000;
/** How long it has after SIGTERM to finish, flush its logs and exit (it gives itself 10 s) before it is killed. */
const STOP_TIMEOUT_MS = 15_000;
/** The variables src/config.ts reads: none is inherited from the benchmark's own environment. */
const CONFIG_VARS = ["PORT", "HOST", "DATA_DIR", "KEYS_FILE", "BASE_URL", "MAX_AGE", "LOG_REQUESTS", "WAIT_FOR_SNAPSHOT", "TRUST_PROXY", "METRICS_TOKEN"];

export interface DeployedServer extends ServerChild {
  /** Where its stdout (the request log) goes. */
  logFile: string;
  /** What it printed on stderr so far (the last 20,000 characters). */
  stderr(): string;
  /** The exit code or signal, once it has exited. */
  exit(): string | null;
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
  const script = join(o.cwd, "src", "cli", "serve.ts");
  const nodeArgv = [...o.nodeArgs, "--import", "tsx", script];
  const [cmd, args] = o.core === null ? [process.execPath, nodeArgv] : ["taskset", ["-c", String(o.core), process.execPath, ...nodeArgv]];
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: "production" };
  for (const name of CONFIG_VARS) delete env[name];
  Object.assign(env, o.env);
  // `>> file`, as operators run it: stdout is a file opened for appending, not a pipe to us.
  const out = openSync(o.logFile, "a");
  const child = spawn(cmd, args, { cwd: o.cwd, stdio: ["ignore", out, "pipe"], env });
  closeSync(out);
  const err = child.stderr!;
  let stderr = "";
  let exit: string | null = null;
  err.on("data", (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
  });
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exit = signal ?? `code ${code}`;
      resolve();
    }),
  );
  const host = (o.env.HOST ?? "127.0.0.1").replace(/[.[\]:]/g, "\\$&");
  const ready = new RegExp(`listening on http://${host}:(\\d+)`);
  const port = await new Promise<number>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(`did not start within ${READY_TIMEOUT_MS / 1000} s`), READY_TIMEOUT_MS);
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`as-deployed server (src/cli/serve.ts) ${why}${stderr ? `:\n${stderr.trim()}` : ""}`));
    };
    err.on("data", () => {
      const m = ready.exec(stderr);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code, signal) => fail(`exited before it was ready (${signal ?? `code ${code}`})`));
    child.once("error", (err) => fail(`could not be spawned: ${err.message}`));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  return { name: "as deployed", port, pid: child.pid!, logFile: o.logFile, stop, stderr: () => stderr, exit: () => exit };
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
