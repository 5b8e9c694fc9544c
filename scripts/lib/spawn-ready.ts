// Spawning a server script under node (optionally pinned to a core), waiting until it says it is ready, and stopping it.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";

/** How long a server may take to load and listen, by default. */
const DEFAULT_READY_TIMEOUT_MS = 60_000;
/** How long a server has to exit after SIGTERM before it is killed, by default. */
const DEFAULT_STOP_GRACE_MS = 5_000;
/** How many of the last characters of stderr are kept, by default. */
const DEFAULT_KEEP_STDERR = 20_000;

export interface ReadyChild {
  child: ChildProcess;
  pid: number;
  /** The port, from the ready line. */
  port: number;
  /** What it wrote on stderr so far (the last `keepStderr` characters). */
  stderr(): string;
  /** Its exit code or signal, once it has exited; null while it runs. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | null;
  /** SIGTERM, then SIGKILL after the grace period; resolves when it has exited. */
  stop(): Promise<void>;
}

export interface SpawnReadyOptions {
  /** Who it is, for error messages ("handler server", ...). */
  name: string;
  /** The script node runs (`--import tsx`, so TypeScript). */
  script: string;
  /** Its arguments. Default none. */
  scriptArgs?: readonly string[];
  /** Working directory: the repository root, so that `--import tsx` resolves. */
  cwd: string;
  /** Options for node, before `--import tsx`. Default none. */
  nodeArgs?: readonly string[];
  /** The child's whole environment (nothing is added: merge `process.env` yourself if it should be inherited). */
  env: NodeJS.ProcessEnv;
  /** Core to pin it to (`taskset -c`), or null to leave it unpinned. */
  core: number | null;
  /** The stream whose line says it is ready, and that line's pattern; its first group is the port. */
  ready: { stream: "stdout" | "stderr"; pattern: RegExp };
  /** Where stdout goes: a pipe we drain, nowhere, or a file descriptor. Must be "pipe" when ready is on stdout. Default: "pipe" when ready is on stdout, else "ignore". */
  stdout?: "pipe" | "ignore" | number;
  /** How long it may take to be ready before it is killed and this fails. Default 60 s. */
  readyTimeoutMs?: number;
  /** How long it has to exit after SIGTERM before SIGKILL. Default 5 s. */
  stopGraceMs?: number;
  /** How many of the last characters of stderr to keep. Default 20,000. */
  keepStderr?: number;
  /** Opens an IPC channel (child.send / process.send) beside the three streams. Default false. */
  ipc?: boolean;
}

/**
 * Runs `node [nodeArgs] --import tsx <script> [scriptArgs]` (under `taskset -c <core>` when a core is given) and
 * resolves once `ready.pattern` matches what it wrote on `ready.stream`; fails, with its stderr, and kills it if it
 * exits, cannot be spawned, or takes longer than `readyTimeoutMs` first.
 */
export async function spawnReady(o: SpawnReadyOptions): Promise<ReadyChild> {
  const stdout = o.stdout ?? (o.ready.stream === "stdout" ? "pipe" : "ignore");
  if (o.ready.stream === "stdout" && stdout !== "pipe")
    throw new Error(`${o.name}: ready on stdout needs stdout "pipe"`);
  const readyTimeoutMs = o.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const keepStderr = o.keepStderr ?? DEFAULT_KEEP_STDERR;
  const nodeArgv = [...(o.nodeArgs ?? []), "--import", "tsx", o.script, ...(o.scriptArgs ?? [])];
  const [cmd, args] =
    o.core === null ? [process.execPath, nodeArgv] : ["taskset", ["-c", String(o.core), process.execPath, ...nodeArgv]];
  const child = spawn(cmd, args, {
    cwd: o.cwd,
    env: o.env,
    stdio: ["ignore", stdout, "pipe", ...(o.ipc ? ["ipc" as const] : [])],
  });

  let stderr = "";
  let exit: ReturnType<ReadyChild["exit"]> = null;
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    stderr += chunk;
    if (stderr.length > keepStderr) stderr = stderr.slice(-keepStderr);
  });
  child.stdout?.resume(); // drained, or a chatty child would block on a full pipe
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );

  const port = await new Promise<number>((resolve, reject) => {
    let seen = "";
    let settled = false;
    const timer = setTimeout(() => fail(`did not start within ${readyTimeoutMs / 1000} s`), readyTimeoutMs);
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${o.name} ${why}${stderr ? `:\n${stderr.trim()}` : ""}`));
    };
    const stream = o.ready.stream === "stdout" ? child.stdout! : child.stderr!;
    stream.on("data", (chunk: Buffer | string) => {
      if (settled) return;
      seen += chunk.toString();
      const m = o.ready.pattern.exec(seen);
      if (m) {
        settled = true;
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code, signal) => fail(`exited before it was ready (${signal ?? `code ${code}`})`));
    child.once("error", (err) => fail(`could not be spawned: ${err.message}`));
  });

  const stopGraceMs = o.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), stopGraceMs);
    await exited;
    clearTimeout(timer);
  };
  return { child, pid: child.pid!, port, stderr: () => stderr, exit: () => exit, stop };
}
