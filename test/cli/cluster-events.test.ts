// GET /v1/events under WORKERS=2 (src/cli/cluster.ts): streams held by different workers get the same events with the
// same IDs, a stream resumed with Last-Event-ID on the other worker gets exactly what it missed, and SIGTERM ends them.
// The server runs on the real clock: two sales begin a few seconds after the build.
import { once } from "node:events";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { BASE, iso, sale, spawnServe, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";
import { openSse } from "../helpers/sse.ts";
import type { SseClient } from "../helpers/sse.ts";

/** The worker a stream is held by, from its first comment (`<snapshot ID> worker <n>`). */
const workerOf = (c: SseClient) => /worker (\d+)$/.exec(c.comments[0] ?? "")?.[1];

describe("GET /v1/events with WORKERS=2", () => {
  it("sends the same events with the same IDs from both workers, and resumes on the other worker", async () => {
    const root = await tempDir();
    const dataDir = join(root, "data");
    const catalogDir = join(root, "catalog");
    const keysFile = join(root, "keys.json");
    // Time enough to build, start two workers and open the streams before the first sale begins.
    const first = Math.ceil(Date.now() / 1000) + 12;
    const second = first + 3;
    const catalog = standardCatalog();
    catalog.sales.push(
      sale("first", { store: "home", begins: iso(first), ends: iso(first + 3600) }),
      sale("second", { store: "men", begins: iso(second), ends: iso(second + 3600) }),
    );
    await writeCatalog(catalogDir, catalog);
    await buildSnapshot({ catalogDir, dataDir, baseUrl: BASE });
    const key = await createKey(keysFile, "cluster-events", new Date(), { rate: 1e9, burst: 1e9 });
    const child = spawnServe({ DATA_DIR: dataDir, KEYS_FILE: keysFile, WORKERS: "2", LOG_REQUESTS: "0" }, [
      "ignore",
      "ignore",
      "pipe",
    ]);
    let stderr = "";
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    const clients: SseClient[] = [];
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr!.on("data", () => {
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+) \(2 workers\)/.exec(stderr);
          if (m) resolve(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`serve exited (${code}): ${stderr}`)));
      });
      const events = `${url}/v1/events?apikey=${key}`;
      /** A stream (headers only: a new connection each, which the primary hands to the workers in turn) and its worker. */
      const open = async (headers: Record<string, string> = {}) => {
        const c = await openSse(events, headers);
        clients.push(c);
        await c.until(() => c.comments.length > 0);
        return c;
      };
      /** Opens streams until one is held by `worker` (at most 10), closing the others. */
      const openOn = async (worker: string, headers: Record<string, string> = {}) => {
        for (let i = 0; i < 10; i++) {
          const c = await open(headers);
          if (workerOf(c) === worker) return c;
          c.close();
        }
        throw new Error(`no stream landed on worker ${worker}`);
      };
      const live = [await open(), await open(), await open(), await open()];
      const workers = [...new Set(live.map(workerOf))].sort();
      expect(workers).toHaveLength(2);
      expect(Date.now() / 1000, "the streams opened after the first sale began: raise the lead").toBeLessThan(first);
      const [a, b] = workers.map((w) => live.find((c) => workerOf(c) === w)!);

      await Promise.all(live.map((c) => c.until(() => c.events.length === 1, 20_000)));
      const firstIds = new Set(live.map((c) => c.events[0]!.id));
      expect(firstIds.size).toBe(1);
      expect(live.map((c) => c.events[0]!.event)).toEqual(Array(4).fill("sale.begins"));
      // The same sale and instant; `sent` is each worker's own.
      const data = (c: SseClient) => {
        const { sale: body, at } = JSON.parse(c.events[0]!.data) as { sale: unknown; at: string };
        return { body, at };
      };
      expect(data(a!)).toEqual(data(b!));
      expect(data(a!).at).toBe(iso(first));
      const lastId = a!.events[0]!.id;
      a!.close(); // disconnects after the first; the second begins meanwhile
      await b!.until(() => b!.events.length === 2, 10_000);
      const missed = b!.events[1]!;
      expect(JSON.parse(missed.data).sale.sale_key).toBe("second");

      // Resumed on the other worker than the one it left, and on the same one: exactly the event it missed.
      for (const worker of [workerOf(b!)!, workerOf(a!)!]) {
        const resumed = await openOn(worker, { "Last-Event-ID": lastId });
        await resumed.until(() => resumed.events.length === 1);
        expect(resumed.events.map((e) => [e.id, e.event])).toEqual([[missed.id, missed.event]]);
      }

      child.kill("SIGTERM");
      const [code] = (await once(child, "exit")) as [number | null];
      expect(code).toBe(0);
      // Every stream still open was ended by its worker's graceful close, so its client reconnects elsewhere.
      await Promise.all(clients.map((c) => c.until(() => c.ended)));
    } finally {
      for (const c of clients) c.close();
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});
