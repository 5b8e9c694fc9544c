// Starting the benchmarked server (bench/search-http/server.ts) pinned to one core, and stopping it.
import { join } from "node:path";
import { SERVER_NODE_FLAGS } from "../../src/serve/http/server.ts";
import { spawnServer } from "../lib/servers.ts";
import type { ServerChild } from "../lib/servers.ts";

/** How long loading the snapshot and listening may take (100,000 products load in a few seconds). */
const READY_TIMEOUT_MS = 120_000;
/** Grace period between SIGTERM and SIGKILL. */
const STOP_TIMEOUT_MS = 10_000;

export interface ServerChildOptions {
  /** Core to pin the server to with `taskset -c`, or null to leave it unpinned. */
  core: number | null;
  /** Repository root: the working directory, so that `--import tsx` resolves. */
  cwd: string;
  dataDir: string;
  keysFile: string;
  /** The handler's fixed clock, epoch ms. */
  nowMs: number;
  /** Write a CPU profile of the requests here (from READY to SIGTERM). */
  profileFile?: string;
}

/** Spawns the server and resolves once it prints READY with its port. */
export async function startServerChild(options: ServerChildOptions): Promise<ServerChild> {
  const script = join(options.cwd, "bench", "search-http", "server.ts");
  const args = [
    options.dataDir,
    options.keysFile,
    String(options.nowMs),
    ...(options.profileFile ? [options.profileFile] : []),
  ];
  return spawnServer("search", script, args, {
    core: options.core,
    cwd: options.cwd,
    nodeArgs: [...SERVER_NODE_FLAGS],
    readyTimeoutMs: READY_TIMEOUT_MS,
    stopTimeoutMs: STOP_TIMEOUT_MS,
  });
}
