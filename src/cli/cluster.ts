// WORKERS=N: the primary process of node:cluster. It runs no server itself: it starts N workers (each runs the whole
// server, src/cli/run-server.ts, on the one port the primary shares out), starts a new one when one dies, and on
// SIGTERM or SIGINT has every worker finish its requests and write its logs before it exits.
import cluster from "node:cluster";
import type { Worker } from "node:cluster";
import type { Config } from "../config/api-settings.ts";
import { logError } from "./run-server.ts";

/** A worker that dies this soon after it started counts as a failed start; this many in a row stop the server. */
const FAILED_START_MS = 5_000;
const MAX_FAILED_STARTS = 5;
/** How long workers get to finish in-flight requests on shutdown before they are killed. */
const DRAIN_MS = 15_000;

/** Starts `config.workers` workers and keeps that many running until SIGTERM/SIGINT; resolves with the port. */
export async function runPrimary(config: Config): Promise<{ port: number }> {
  let stopping = false;
  let failedStarts = 0;
  const started = new Map<Worker, number>();
  const fork = () => started.set(cluster.fork(), Date.now());

  cluster.on("exit", (worker, code, signal) => {
    const ranMs = Date.now() - (started.get(worker) ?? 0);
    started.delete(worker);
    if (stopping) {
      if (started.size === 0) process.exit(0);
      return;
    }
    failedStarts = ranMs < FAILED_START_MS ? failedStarts + 1 : 0;
    const event = {
      time: new Date().toISOString(),
      level: "error" as const,
      event: "worker_exited",
      error: {
        name: "WorkerExit",
        message: `worker ${worker.id} (pid ${worker.process.pid}) exited: ${signal ?? `code ${code}`}`,
      },
    };
    logError(event);
    if (failedStarts >= MAX_FAILED_STARTS) {
      console.error(
        `serve: ${failedStarts} workers in a row died within ${FAILED_START_MS / 1000} s of starting; stopping`,
      );
      stopping = true;
      for (const w of started.keys()) w.process.kill("SIGTERM");
      if (started.size === 0) process.exit(1);
      return;
    }
    fork();
  });

  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`serve: ${signal}: workers finishing in-flight requests`);
    for (const w of started.keys()) w.process.kill("SIGTERM");
    setTimeout(() => {
      for (const w of started.keys()) w.process.kill("SIGKILL");
      process.exit(1);
    }, DRAIN_MS).unref();
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));

  // Ready once every worker listens (on the one port the primary shares out, even for PORT=0).
  const listening = new Promise<number>((resolve, reject) => {
    let ready = 0;
    const onListening = (_worker: Worker, address: { port: number }) => {
      if (++ready < config.workers) return;
      cluster.off("listening", onListening);
      resolve(address.port);
    };
    cluster.on("listening", onListening);
    cluster.once("exit", () => ready < config.workers && reject(new Error("a worker exited before listening")));
  });
  for (let i = 0; i < config.workers; i++) fork();
  return { port: await listening };
}
