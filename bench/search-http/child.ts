// Starting the benchmarked server (bench/search-http/server.ts) pinned to one core, and stopping it.
import { spawn } from "node:child_process";
import { join } from "node:path";

/** How long loading the snapshot and listening may take (100,000 products load in a few seconds). */
const READY_TIMEOUT_MS = 120_000;
/** Grace period between SIGTERM and SIGKILL. */
const STOP_TIMEOUT_MS = 10_000;

export interface ServerChild {
  port: number;
  pid: number;
  /** SIGTERM (SIGKILL after a grace period); resolves when the process has exited. */
  stop(): Promise<void>;
}

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
  const nodeArgv = ["--import", "tsx", script, options.dataDir, options.keysFile, String(options.nowMs), ...(options.profileFile ? [options.profileFile] : [])];
  const [cmd, args] = options.core === null ? [process.execPath, nodeArgv] : ["taskset", ["-c", String(options.core), process.execPath, ...nodeArgv]];
  const child = spawn(cmd, args, { cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_ENV: "production" } });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`the server ${why}${stderr ? `:\n${stderr.trim()}` : ""}`));
    };
    const timer = setTimeout(() => fail(`did not start within ${READY_TIMEOUT_MS / 1000} s`), READY_TIMEOUT_MS);
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
  return {
    port,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
