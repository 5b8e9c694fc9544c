// Usage per key from real server processes (`npm run serve`'s entry point) into both stores: two servers' counts add
// up exactly, WORKERS=2's workers too, a graceful stop hands over the last counts (the period is longer than the test),
// and a killed server loses at most what it counted since its last hand-over.
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { openDatabase } from "../../src/db/database.ts";
import type { PortalDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";
import { countsOnDay, requestsIn } from "../../src/usage/store.ts";
import type { Counts } from "../../src/usage/store.ts";
import { BASE, iso, spawnServe, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";
import { watchOutput } from "../helpers/processes.ts";
import { bothDatabases, startPostgres } from "../portal/postgres-server.ts";
import type { PostgresServer } from "../portal/postgres-server.ts";

let postgres: PostgresServer;
let dataDir: string;
let keysFile: string;
beforeAll(async () => {
  postgres = await startPostgres();
  const root = await tempDir("fsa-usage-servers-");
  dataDir = join(root, "data");
  keysFile = join(root, "keys.json");
  // Sales on now by the real clock (the servers run on it).
  const catalog = standardCatalog();
  const now = Math.floor(Date.now() / 1000);
  catalog.sales = catalog.sales.map((s) => ({ ...s, begins: iso(now - 3600), ends: iso(now + 86_400) }));
  await writeCatalog(join(root, "catalog"), catalog);
  await buildSnapshot({ catalogDir: join(root, "catalog"), dataDir, baseUrl: BASE });
});
afterAll(async () => {
  await postgres?.stop();
});

/** A server process on its own port; resolves once it listens. */
async function serve(env: Record<string, string>): Promise<{ url: string; child: ChildProcess; stderr: () => string }> {
  const child = spawnServe({ DATA_DIR: dataDir, KEYS_FILE: keysFile, LOG_REQUESTS: "0", ...env }, [
    "ignore",
    "ignore",
    "pipe",
  ]);
  const watched = watchOutput(child, "stderr");
  const line = await watched.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/);
  return { url: line.replace(/^listening on /, ""), child, stderr: watched.output };
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await once(child, "exit");
}

/** Sends `n` requests for `path` with `key`, one after another, and returns their statuses. */
async function send(url: string, path: string, key: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${url}${path}${path.includes("?") ? "&" : "?"}apikey=${key}`, {
      headers: { Connection: "close" },
    });
    await r.arrayBuffer();
    statuses.push(r.status);
  }
  return statuses;
}

const backends = bothDatabases(() => postgres);

describe.each(backends)("servers handing usage to $name", ({ url }) => {
  let databaseUrl: string;
  let db: PortalDatabase;
  beforeAll(async () => {
    databaseUrl = await url();
    db = await openDatabase(databaseUrl);
    await migrate(db, Date.now());
  });
  afterAll(async () => {
    await db?.close();
  });
  const today = (key: string): Promise<Counts> => countsOnDay(db, [key], Date.now());

  it("two servers, one of them with WORKERS=2, stopped gracefully: every request counted once, none lost", async () => {
    const name = `two-${Math.random().toString(36).slice(2, 8)}`;
    const key = await createKey(keysFile, name, new Date(), { rate: 1e9, burst: 1e9 });
    // A period longer than the test: what is stored was handed over by the graceful stop.
    const env = { DATABASE_URL: databaseUrl, USAGE_FLUSH_MS: "10000" };
    const [a, b] = await Promise.all([serve(env), serve({ ...env, WORKERS: "2" })]);
    try {
      const sa = [
        ...(await send(a.url, "/v1/sales/active.json", key, 30)),
        ...(await send(a.url, "/v1/products/999999/detail.json", key, 5)),
      ];
      const sb = [
        ...(await send(b.url, "/v1/sales/active.json", key, 20)),
        ...(await send(b.url, "/v1/nothing.json", key, 4)),
      ];
      expect([...sa, ...sb].filter((s) => s === 200)).toHaveLength(50);
      expect([...sa, ...sb].filter((s) => s === 404)).toHaveLength(9);
    } finally {
      await Promise.all([stop(a.child, "SIGTERM"), stop(b.child, "SIGTERM")]);
    }
    const counts = await today(name);
    expect(counts).toMatchObject({ ok: 50, not_modified: 0, client_error: 9, limited: 0, server_error: 0 });
    expect(counts.bytes).toBeGreaterThan(0);
  });

  it("a killed server loses at most what it counted since its last hand-over", async () => {
    const name = `killed-${Math.random().toString(36).slice(2, 8)}`;
    const key = await createKey(keysFile, name, new Date(), { rate: 1e9, burst: 1e9 });
    const flushMs = 1000;
    const server = await serve({ DATABASE_URL: databaseUrl, USAGE_FLUSH_MS: String(flushMs) });
    /** Each answered request's time (epoch ms). */
    const answered: number[] = [];
    let killedAt = 0;
    try {
      // Requests until the store has seen some hand-overs (at least 2 s of them), then a kill mid-stream.
      const started = Date.now();
      while (Date.now() - started < 2.5 * flushMs) {
        await send(server.url, "/v1/sales/active.json", key, 1);
        answered.push(Date.now());
      }
      killedAt = Date.now();
      await stop(server.child, "SIGKILL");
    } finally {
      await stop(server.child, "SIGKILL");
    }
    const stored = requestsIn(await today(name));
    // Nothing counted twice or invented; what was answered more than one period (plus the time a hand-over takes)
    // before the kill is stored.
    expect(stored).toBeLessThanOrEqual(answered.length);
    const handedBefore = answered.filter((t) => t < killedAt - flushMs - 500).length;
    expect(stored).toBeGreaterThanOrEqual(handedBefore);
    expect(handedBefore).toBeGreaterThan(0);
  });
});
