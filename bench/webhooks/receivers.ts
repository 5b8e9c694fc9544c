// The webhooks benchmark's receivers: a few node:http servers on 127.0.0.1, each endpoint a path of one of them
// (`/e/<n>`), answering 200 at once and recording when each delivery arrived (performance.timeOrigin +
// performance.now(), once its body is read) with its webhook-id; the bodies and headers of a sample of endpoints are
// kept, to be verified with the `standardwebhooks` package once the run is over (not while deliveries arrive).
import { once } from "node:events";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";

/** One delivery as a receiver saw it. */
interface Arrival {
  endpoint: number;
  /** Epoch ms, sub-ms precision. */
  atMs: number;
  id: string;
  /** Kept for the sampled endpoints only. */
  body?: string;
  headers?: IncomingHttpHeaders;
}

export interface Receivers {
  /** Endpoint `n`'s URL. */
  urlOf: (n: number) => string;
  /** What arrived since the last `reset`. */
  arrivals: Arrival[];
  /** Forgets what arrived (before a run). */
  reset(): void;
  close(): Promise<void>;
}

/** Starts `servers` receivers; endpoints `n` with `sampled(n)` keep their bodies and headers. */
export async function startReceivers(servers: number, sampled: (n: number) => boolean): Promise<Receivers> {
  const arrivals: Arrival[] = [];
  const started: Server[] = [];
  for (let i = 0; i < servers; i++) {
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        const atMs = performance.timeOrigin + performance.now();
        res.writeHead(200, { "content-type": "text/plain", "content-length": "2" }).end("ok");
        const endpoint = Number(/^\/e\/(\d+)$/.exec(req.url ?? "")?.[1] ?? -1);
        const id = String(req.headers["webhook-id"] ?? "");
        const keep = sampled(endpoint) ? { body: Buffer.concat(parts).toString("utf8"), headers: req.headers } : {};
        arrivals.push({ endpoint, atMs, id, ...keep });
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    started.push(server);
  }
  const ports = started.map((s) => (s.address() as { port: number }).port);
  return {
    urlOf: (n) => `http://127.0.0.1:${ports[n % ports.length]}/e/${n}`,
    arrivals,
    reset: () => void arrivals.splice(0),
    close: async () => {
      for (const s of started) {
        s.closeAllConnections();
        await new Promise((resolve) => s.close(resolve));
      }
    },
  };
}
