// The benchmarked server as a process of its own: our handler over a snapshot, a fixed clock, no request log.
// Usage: node --import tsx bench/search-http/server.ts <dataDir> <keysFile> <nowMs> [cpuProfileFile]
// Prints `READY <port>` once listening. With a profile file, V8's CPU profiler runs from then (requests only,
// not start-up) until SIGTERM, when the profile is written.
import { createHandler } from "../../src/serve/handler.ts";
import { startServer } from "../../src/serve/http/server.ts";
import { startCpuProfile } from "../lib/profile.ts";

const [dataDir, keysFile, nowArg, profileFile] = process.argv.slice(2);
if (!dataDir || !keysFile || !nowArg || !Number.isFinite(Number(nowArg))) {
  process.stderr.write("usage: server.ts <dataDir> <keysFile> <nowMs> [cpuProfileFile]\n");
  process.exit(2);
}
const now = Number(nowArg);

const handler = await createHandler({ dataDir, keysFile, clock: () => now });
const running = await startServer(handler, "127.0.0.1", 0);

const stopProfile = profileFile ? await startCpuProfile(profileFile) : async (): Promise<void> => {};

process.once("SIGTERM", () => {
  const timer = setTimeout(() => process.exit(0), 5000);
  void stopProfile()
    .then(() => {
      running.server.closeAllConnections();
      return running.close();
    })
    .finally(() => {
      clearTimeout(timer);
      process.exit(0);
    });
});
process.stdout.write(`READY ${running.port}\n`);
