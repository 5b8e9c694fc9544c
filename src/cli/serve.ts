// `npm run serve`: serves the published snapshot (env: PORT, HOST, DATA_DIR, KEYS_FILE, MAX_AGE, LOG_REQUESTS, WORKERS
// and the rest of src/config/api-settings.ts). With WORKERS above 1 this process is the cluster's primary (src/cli/cluster.ts)
// and each worker runs this file again as a server.
import cluster from "node:cluster";
import { parseConfig } from "../config/api-settings.ts";
import { runPrimary } from "./cluster.ts";
import { runServer } from "./run-server.ts";

try {
  const config = parseConfig(process.env);
  const scheme = config.tls ? "https" : "http";
  if (config.workers > 1 && cluster.isPrimary) {
    const { port } = await runPrimary(config);
    console.error(`serve: listening on ${scheme}://${config.host}:${port} (${config.workers} workers)`);
  } else {
    const { port } = await runServer(config);
    if (cluster.isPrimary) console.error(`serve: listening on ${scheme}://${config.host}:${port}`);
  }
} catch (err) {
  console.error(`serve: cannot start: ${(err as Error).message}`);
  process.exit(1);
}
