// One benchmarked HTTP server, run as its own process: our handler, a bare node:http server, or serve-handler.
// Usage: node --import tsx bench/serve/server-child.ts <config.json>; prints `READY <port>` when listening.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startCpuProfile } from "../lib/profile.ts";

/** One encoding of a bare-server route: the body file and the response headers, as a flat [name, value, ...] list. */
interface BareBody {
  file: string;
  headers: string[];
}

/** A request target (query string included, exactly as wrk sends it) and what the bare server answers it with. */
export interface BareRoute {
  url: string;
  identity: BareBody;
  /** Sent when Accept-Encoding mentions br. */
  br: BareBody;
}

/** What the benchmark hands the process (as a JSON file). */
export type ChildConfig = { host: string; port: number } & (
  | { mode: "handler"; dataDir: string; keysFile: string; authFailureLimit?: { rate: number; burst: number } }
  | { mode: "bare"; routes: BareRoute[] }
  | { mode: "serve-handler"; publicDir: string }
);

/** The upper bound: the exact bytes (and headers) our handler sent, looked up by the request target, no auth. */
function bareServer(routes: readonly BareRoute[]): Server {
  const read = (b: BareBody) => ({ body: readFileSync(b.file), headers: b.headers });
  const byUrl = new Map(routes.map((r) => [r.url, { identity: read(r.identity), br: read(r.br) }]));
  return createServer((req, res) => {
    const r = byUrl.get(req.url ?? "");
    if (!r) return void res.writeHead(404, ["Content-Length", "0"]).end();
    const { body, headers } = req.headers["accept-encoding"]?.includes("br") ? r.br : r.identity;
    res.writeHead(200, headers);
    res.end(body);
  });
}

const configFile = process.argv[2];
if (!configFile) throw new Error("usage: server-child.ts <config.json>");
const config = JSON.parse(readFileSync(configFile, "utf8")) as ChildConfig;
let port: number;
if (config.mode === "handler") {
  // Imported here so that the bare and serve-handler processes do not load our code at all.
  const { createHandler } = await import("../../src/serve/handler.ts");
  const { startServer } = await import("../../src/serve/http/server.ts");
  const { dataDir, keysFile, authFailureLimit } = config;
  const handler = await createHandler({ dataDir, keysFile, ...(authFailureLimit ? { authFailureLimit } : {}) });
  port = (await startServer(handler, config.host, config.port)).port;
} else {
  let server: Server;
  if (config.mode === "bare") server = bareServer(config.routes);
  else {
    const { default: serveHandler } = await import("serve-handler");
    const { publicDir } = config;
    server = createServer((req, res) => void serveHandler(req, res, { public: publicDir }));
  }
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(config.port, config.host, resolve));
  port = (server.address() as AddressInfo).port;
}
// With BENCH_CPU_PROFILE=<file>, a CPU profile from now (after loading) to SIGTERM: requests only, not start-up.
const profileFile = process.env.BENCH_CPU_PROFILE;
const stopProfile = profileFile ? await startCpuProfile(profileFile) : async () => {};
process.once("SIGTERM", () => void stopProfile().finally(() => process.exit(0)));
process.stdout.write(`READY ${port}\n`);
