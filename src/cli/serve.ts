// `npm run serve`: serves the published snapshot (env: PORT, HOST, DATA_DIR, KEYS_FILE, MAX_AGE, LOG_REQUESTS).
import { parseConfig } from "../config.ts";
import { runServer } from "./run-server.ts";

try {
  const config = parseConfig(process.env);
  const { port } = await runServer(config);
  console.error(`serve: listening on ${config.tls ? "https" : "http"}://${config.host}:${port}`);
} catch (err) {
  console.error(`serve: cannot start: ${(err as Error).message}`);
  process.exit(1);
}
