// Starts the server for a Config: handler, hot reload, request logs on stdout, graceful shutdown on SIGTERM/SIGINT.
import type { Config } from "../config.ts";
import { createHandler } from "../serve/handler.ts";
import { createReloader } from "../serve/reloader.ts";
import { startServer } from "../serve/server.ts";
import type { RunningServer } from "../serve/server.ts";

export async function runServer(config: Config): Promise<RunningServer> {
  const handler = await createHandler({
    dataDir: config.dataDir,
    keysFile: config.keysFile,
    maxAge: config.maxAge,
    waitForSnapshot: config.waitForSnapshot,
    trustProxy: config.trustProxy,
    log: config.logRequests ? (entry) => process.stdout.write(JSON.stringify(entry) + "\n") : undefined,
  });
  const reloader = createReloader(handler, config.dataDir, config.keysFile, {
    onReload: (id) => console.error(`serve: now serving snapshot ${id}`),
    onError: (err) => console.error(`serve: reload failed, still serving the previous snapshot: ${(err as Error).message}`),
  });
  const running = await startServer(handler, config.host, config.port);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`serve: ${signal}: finishing in-flight requests`);
    reloader.stop();
    void running.close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  return running;
}
