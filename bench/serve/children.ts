// Spawning a benchmarked server as a child process pinned to one core, waiting for it to listen, and stopping it.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ChildConfig } from "./child-config.ts";

/** How long a server may take to load and listen. */
const READY_TIMEOUT_MS = 60_000;
/** How long a server has to exit after SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 5_000;

export interface ServerChild {
  name: string;
  port: number;
  pid: number;
  /** Sends SIGTERM (SIGKILL after a grace period) and waits for the exit. */
  stop(): Promise<void>;
}

export { freePort } from "../../scripts/lib/server-child.ts";

export interface SpawnOptions {
  /** Core to pin the process to (taskset -c), or null to leave it unpinned. */
  core: number | null;
  /** Extra options for node. */
  nodeArgs?: string[];
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Working directory (the repository root, so that `--import tsx` resolves). */
  cwd: string;
  /** Where the config JSON is written. */
  workDir: string;
}

/** Starts `server-child.ts` with `config` and resolves once it prints READY. */
export async function startServerChild(name: string, config: ChildConfig, options: SpawnOptions): Promise<ServerChild> {
  const configFile = join(options.workDir, `${name}.config.json`);
  await writeFile(configFile, JSON.stringify(config));
  const script = join(options.cwd, "bench", "serve", "server-child.ts");
  return spawnServer(name, script, [configFile], options);
}

/**
 * Runs `node [nodeArgs] --import tsx <script> <args>` (pinned with taskset when a core is given) and resolves once
 * it prints `READY <port>`; fails with its stderr if it exits or takes longer than `readyTimeoutMs` first.
 */
export async function spawnServer(
  name: string,
  script: string,
  scriptArgs: readonly string[],
  options: { core: number | null; cwd: string; nodeArgs?: string[]; env?: Record<string, string>; readyTimeoutMs?: number; stopTimeoutMs?: number },
): Promise<ServerChild> {
  const readyTimeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
  const nodeArgv = [...(options.nodeArgs ?? []), "--import", "tsx", script, ...scriptArgs];
  const [cmd, args] = options.core === null ? [process.execPath, nodeArgv] : ["taskset", ["-c", String(options.core), process.execPath, ...nodeArgv]];
  const child = spawn(cmd, args, { cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_ENV: "production", ...options.env } });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    let settled = false;
    const timer = setTimeout(() => fail(`did not start within ${readyTimeoutMs / 1000} s`), readyTimeoutMs);
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${name} server ${why}${stderr ? `:\n${stderr.trim()}` : ""}`));
    };
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^READY (\d+)$/m.exec(out);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code, signal) => fail(`exited before it was ready (${signal ?? `code ${code}`})`));
    child.once("error", (err) => fail(`could not be spawned: ${err.message}`));
  });
  return { name, port, pid: child.pid!, stop: () => stopChild(child, exited, options.stopTimeoutMs ?? STOP_TIMEOUT_MS) };
}

async function stopChild(child: ChildProcess, exited: Promise<void>, stopTimeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), stopTimeoutMs);
  await exited;
  clearTimeout(timer);
}
