// One benchmarked HTTP server, run as its own process: our handler, a bare node:http server, or serve-handler.
// Usage: node --import tsx bench/serve/server-child.ts <config.json>; prints `READY <port>` when listening.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { ChildConfig } from "./child-config.ts";
import { startCpuProfile } from "./profile.ts";

async function listen(server: Server, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return typeof address === "object" && address ? address.port : port;
}

/** The upper bound: the exact bytes (and headers) our handler sent, looked up by the request target, no auth. */
function bareServer(config: Extract<ChildConfig, { mode: "bare" }>): Server {
  const routes = new Map<
    string,
    { identity: Buffer; identityHeaders: string[]; br: Buffer | null; brHeaders: string[] }
  >();
  for (const r of config.routes) {
    routes.set(r.url, {
      identity: readFileSync(r.identity.file),
      identityHeaders: r.identity.headers,
      br: r.br ? readFileSync(r.br.file) : null,
      brHeaders: r.br?.headers ?? [],
    });
  }
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const r = routes.get(req.url ?? "");
    if (!r) {
      res.writeHead(404, ["Content-Length", "0"]);
      res.end();
      return;
    }
    if (r.br && req.headers["accept-encoding"]?.includes("br")) {
      res.writeHead(200, r.brHeaders);
      res.end(r.br);
    } else {
      res.writeHead(200, r.identityHeaders);
      res.end(r.identity);
    }
  });
}

async function main(): Promise<void> {
  const configFile = process.argv[2];
  if (!configFile) throw new Error("usage: server-child.ts <config.json>");
  const config = JSON.parse(readFileSync(configFile, "utf8")) as ChildConfig;
  let close: () => Promise<void>;
  let port: number;

  if (config.mode === "handler") {
    // Imported here so that the bare and serve-handler processes do not load our code at all.
    const { createHandler } = await import("../../src/serve/handler.ts");
    const { startServer } = await import("../../src/serve/server.ts");
    const handler = await createHandler({
      dataDir: config.dataDir,
      keysFile: config.keysFile,
      ...(config.authFailureLimit ? { authFailureLimit: config.authFailureLimit } : {}),
    });
    const running = await startServer(handler, config.host, config.port);
    port = running.port;
    close = async () => {
      running.server.closeAllConnections();
      await running.close();
    };
  } else {
    let server: Server;
    if (config.mode === "bare") {
      server = bareServer(config);
    } else {
      const { default: serveHandler } = await import("serve-handler");
      const publicDir = config.publicDir;
      server = createServer((req, res) => {
        void serveHandler(req, res, { public: publicDir });
      });
    }
    port = await listen(server, config.host, config.port);
    close = () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
  }

  // With BENCH_CPU_PROFILE=<file>, a CPU profile from now (after loading) to SIGTERM: requests only, not start-up.
  const profileFile = process.env.BENCH_CPU_PROFILE;
  const stopProfile = profileFile ? await startCpuProfile(profileFile) : async () => {};
  process.once("SIGTERM", () => {
    const timer = setTimeout(() => process.exit(0), 5000);
    void stopProfile()
      .then(close)
      .finally(() => {
        clearTimeout(timer);
        process.exit(0);
      });
  });
  process.stdout.write(`READY ${port}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`server-child: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
