// Spawning a benchmarked server as a child process pinned to one core, waiting for it to listen, and stopping it.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { spawnReady } from "../../scripts/lib/spawn-ready.ts";
import type { ReadyChild } from "../../scripts/lib/spawn-ready.ts";
import type { ChildConfig } from "./child-config.ts";

/** How long a server may take to load and listen. */
const READY_TIMEOUT_MS = 60_000;
/** How long a server has to exit after SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 5_000;

export type ServerChild = ReadyChild;

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
 * Runs `node [nodeArgs] --import tsx <script> <args>` (pinned with taskset when a core is given, NODE_ENV=production)
 * and resolves once it prints `READY <port>` on stdout; fails with its stderr if it exits or takes longer than
 * `readyTimeoutMs` (default 60 s) first. `stopTimeoutMs` (default 5 s): SIGTERM to SIGKILL.
 */
export function spawnServer(
  name: string,
  script: string,
  scriptArgs: readonly string[],
  options: {
    core: number | null;
    cwd: string;
    nodeArgs?: string[];
    env?: Record<string, string>;
    readyTimeoutMs?: number;
    stopTimeoutMs?: number;
  },
): Promise<ServerChild> {
  return spawnReady({
    name: `${name} server`,
    script,
    scriptArgs,
    cwd: options.cwd,
    nodeArgs: options.nodeArgs,
    env: { ...process.env, NODE_ENV: "production", ...options.env },
    core: options.core,
    ready: { stream: "stdout", pattern: /^READY (\d+)$/m },
    readyTimeoutMs: options.readyTimeoutMs ?? READY_TIMEOUT_MS,
    stopGraceMs: options.stopTimeoutMs ?? STOP_TIMEOUT_MS,
  });
}
