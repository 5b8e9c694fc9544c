// Starts the server for a Config: handler, hot reload, TLS (with renewed certificates picked up), request logs on
// stdout, errors as JSON lines on stderr, graceful shutdown on SIGTERM/SIGINT.
import cluster from "node:cluster";
import { fstatSync } from "node:fs";
import type { Config } from "../config/api-settings.ts";
import { errorLine } from "../errors.ts";
import { createHandler } from "../serve/handler.ts";
import type { ErrorLog } from "../serve/handler.ts";
import { addKeySyncMetrics, startKeySyncFor } from "./start-key-sync.ts";
import { addEdgeMetricsFor, startEdgeFor } from "./start-edge.ts";
import { createLogBuffer, fdSink } from "./log-buffer.ts";
import { createReloader } from "../serve/http/reloader.ts";
import { startServer } from "../serve/http/server.ts";
import type { RunningServer } from "../serve/http/server.ts";
import { startUsage } from "../usage/hand-over.ts";
import { createTlsWatcher, describeCertificate, loadTlsPair } from "../serve/http/tls.ts";
import type { CertificateInfo } from "../serve/http/tls.ts";

/** How long GET /v1/usage.json reuses a key's figures read from the store. */
const USAGE_FIGURES_TTL_MS = 2000;
/** The most bytes one write into a pipe takes whole (POSIX PIPE_BUF on Linux). */
const PIPE_BUF = 4096;

/** One error, one JSON line on stderr. */
export function logError(entry: ErrorLog): void {
  process.stderr.write(JSON.stringify(entry) + "\n");
}

export async function runServer(config: Config): Promise<RunningServer> {
  // An exception nothing caught is logged with its stack before node ends the process as it would anyway.
  process.on("uncaughtExceptionMonitor", (err, origin) => logError(errorLine("error", origin, err)));
  // Workers of a cluster share stdout: into a pipe, a write of at most PIPE_BUF (4 KB) is never interleaved with
  // another process's, so their batches are kept that small there (a file takes each write whole anyway).
  const shared = cluster.isWorker && fstatSync(1).isFIFO();
  const logs = config.logRequests
    ? createLogBuffer(fdSink(1, process.stdout), shared ? { maxBytes: PIPE_BUF } : {})
    : null;
  // Imported only with REDIS_URL: loading ioredis at all (its modules, never used) cost every request about 0.1 us
  // (perf: node's header and stream code ran through generic property lookups more often).
  const limits = config.redisUrl
    ? (await import("../serve/admission/shared-limits.ts")).connectSharedLimits(
        config.redisUrl,
        redisEvents(config.redisUrl),
      )
    : null;
  const usage = config.countUsage ? startUsageFor(config) : null;
  const edge = startEdgeFor(config);
  const handler = await createHandler({
    ...config,
    limits: limits ?? undefined,
    usage: usage ?? undefined,
    edge: edge ?? undefined,
    log: logs?.request,
    onError: logError,
  });
  const reloader = createReloader(handler, config.dataDir, config.keysFile, {
    watchKeys: true,
    onReload: (id) => console.error(`serve: now serving snapshot ${id}`),
    onError: (err) => logError(errorLine("error", "reload_failed", err)),
  });
  // KEYS_SYNC: keys from (or to) other machines through Redis, written to the keys file the reloader applies.
  const keySync = await startKeySyncFor(
    config.keysSync,
    config.redisUrl,
    config.keysFile,
    "serve",
    () => void reloader.check(),
  );
  if (keySync) addKeySyncMetrics(handler.metrics, keySync);
  addEdgeMetricsFor(handler.metrics, edge);
  const tls = config.tls ? await loadTlsPair(config.tls) : null;
  const running = await startServer(handler, config.host, config.port, tls ? { tls } : {});
  const certificate = (c: CertificateInfo) =>
    `${c.subject.replace(/\n/g, ", ")}, serial ${c.serialNumber}, valid to ${c.validTo}`;
  if (tls) console.error(`serve: TLS certificate ${certificate(describeCertificate(tls))}`);
  const tlsWatcher =
    config.tls && tls && "setSecureContext" in running.server
      ? createTlsWatcher(config.tls, tls, running.server, {
          onReload: (c) => console.error(`serve: now using TLS certificate ${certificate(c)}`),
          onError: (err) => logError(errorLine("error", "tls_reload_failed", err)),
        })
      : null;
  handler.metrics?.watch(running.server);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`serve: ${signal}: finishing in-flight requests`);
    reloader.stop();
    tlsWatcher?.stop();
    // Every request answered has its log line written before the process exits.
    const exit = () =>
      void Promise.all([logs?.close(), limits?.close(), keySync?.close(), edge?.close()]).then(() => process.exit(0));
    // The last usage counts are handed over once every request has been answered (and counted).
    void running
      .close()
      .then(() => usage?.close())
      .then(exit);
    setTimeout(exit, 10_000).unref();
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  return running;
}

/** Usage per key into the portal's database (DATABASE_URL), with a warning once per outage of it. */
function startUsageFor(config: Config) {
  return startUsage({
    databaseUrl: config.databaseUrl,
    flushMs: config.usageFlushMs,
    maxRows: config.usageBufferRows,
    figuresTtlMs: USAGE_FIGURES_TTL_MS,
    now: Date.now,
    onUnavailable: (err) =>
      logError(
        errorLine("warn", "usage_store_unavailable", err, {
          explain: (m) =>
            `the usage store cannot be reached (${m}): usage is kept here (up to ${config.usageBufferRows} rows) until it answers`,
        }),
      ),
    onAvailable: () => console.error("serve: the usage store answers again; counts kept meanwhile handed over"),
  });
}

/** What the server says of Redis: where the limits are shared, and once per outage that they are per process. */
function redisEvents(url: string) {
  const where = redisAddress(url);
  return {
    onConnected: () => console.error(`serve: rate limits shared through Redis at ${where}`),
    onUnavailable: (err: unknown) =>
      logError(
        errorLine("warn", "redis_unavailable", err, {
          explain: (m) =>
            `Redis at ${where} cannot be reached (${m}): rate limits are per process until it answers again`,
        }),
      ),
  };
}

/** host:port/db of a Redis URL: never its user name or password. */
export function redisAddress(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`;
}
