// Child processes for the tests: a real redis-server from Debian on a free loopback port, and
// processes whose output is watched for a pattern (no sleeping: each wait ends on the line, or on exit).
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { requireProgram } from "../../scripts/lib/test-programs.ts";

/** A child process and everything it has written on one stream, with a wait for a pattern in it. */
export interface Watched {
  child: ChildProcess;
  output: () => string;
  /** Resolves when `pattern` has matched the output `times` times; fails if the process exits first. */
  waitFor(pattern: RegExp, times?: number): Promise<string>;
}

export function watchOutput(child: ChildProcess, stream: "stdout" | "stderr"): Watched {
  let text = "";
  const waiters = new Set<() => void>();
  child[stream]!.on("data", (c: Buffer) => {
    text += c.toString();
    for (const w of waiters) w();
  });
  return {
    child,
    output: () => text,
    waitFor: (pattern, times = 1) =>
      new Promise((resolve, reject) => {
        const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : pattern.flags + "g");
        const check = () => {
          const found = [...text.matchAll(global)];
          if (found.length >= times) {
            waiters.delete(check);
            resolve(found[times - 1]![0]);
          }
        };
        waiters.add(check);
        child.once("exit", (code) => reject(new Error(`exited (${code}) before ${pattern}: ${text}`)));
        check();
      }),
  };
}

/** redis-server on 127.0.0.1:`port`, keeping nothing on disk; resolves once it accepts connections. */
export async function startRedis(port: number): Promise<Watched> {
  const program = requireProgram("redis-server");
  const redis = watchOutput(
    spawn(program, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"],
    }),
    "stdout",
  );
  await redis.waitFor(/Ready to accept connections/);
  return redis;
}

/** Stops a watched process (if it still runs) and waits for its exit. */
export async function stopProcess(w: Watched | undefined, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!w || w.child.exitCode !== null || w.child.signalCode !== null) return;
  w.child.kill(signal);
  await once(w.child, "exit");
}

/** The p-th percentile (0-100) of `values`, nearest rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
