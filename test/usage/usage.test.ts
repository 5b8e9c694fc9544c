// Usage per key end to end in one process, against both stores (SQLite in a temp file, a real PostgreSQL): known
// requests (200s, 304s, 404s, 429s) are in the store with exactly those counts once handed over; GET /v1/usage.json
// answers them, free of the rate limit; a batch sent twice counts once; a store that is down keeps nothing from
// being counted, and gets it all once it answers; retention removes what is past its time.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_INDEX } from "../../src/api/routing.ts";
import { openDatabase } from "../../src/db/database.ts";
import type { PortalDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { startUsage } from "../../src/usage/hand-over.ts";
import type { Usage } from "../../src/usage/hand-over.ts";
import {
  countsBetween,
  countsOnDay,
  DAY_MS,
  HOUR_MS,
  lastUsed,
  pruneUsage,
  recordBatch,
  series,
} from "../../src/usage/store.ts";
import { startTestApi, T0, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { bothDatabases, startPostgres } from "../portal/postgres-server.ts";
import type { PostgresServer } from "../portal/postgres-server.ts";

let postgres: PostgresServer;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

const backends = bothDatabases(() => postgres);

describe.each(backends)("usage per key, stored in $name", ({ url }) => {
  let api: TestApi;
  let usage: Usage;
  let db: PortalDatabase;
  let limitedKey: string;
  const now = () => api.clock.now * 1000;
  beforeAll(async () => {
    const databaseUrl = await url();
    // The hand-over reads the server's clock (set once the server is made), and is flushed by the test.
    usage = startUsage({ databaseUrl, flushMs: 3_600_000, maxRows: 1000, figuresTtlMs: 0, now });
    api = await startTestApi(undefined, { usage });
    limitedKey = await createKey(api.keysFile, "limited", new Date(), { rate: 1, burst: 3 });
    await api.handler.reload();
    db = await openDatabase(databaseUrl);
    await migrate(db, now());
    // The PostgreSQL database is shared by both suites' servers: start from no usage.
    await db.run("DELETE FROM usage_minute");
    await db.run("DELETE FROM usage_hour");
    await db.run("DELETE FROM usage_day");
    await db.run("DELETE FROM usage_last");
  });
  afterAll(async () => {
    await usage?.close();
    await api?.close();
    await db?.close();
  });

  it("stores exactly the requests made: 2xx, 304, 4xx, 429 per key and minute, with bytes and the last use", async () => {
    // Bytes are counted as sent: identity, so that the body read here is the body sent.
    const identity = { "Accept-Encoding": "identity" };
    let bytes = 0;
    const list = await api.get(`/v1/sales/active.json?apikey=${api.key}`, { headers: identity });
    bytes += (await list.arrayBuffer()).byteLength;
    const etag = list.headers.get("etag")!;
    const again = await api.get(`/v1/sales/active.json?apikey=${api.key}`, { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    for (let i = 0; i < 2; i++) {
      const missing = await api.get(`/v1/products/999999/detail.json?apikey=${api.key}`, { headers: identity });
      expect(missing.status).toBe(404);
      bytes += (await missing.arrayBuffer()).byteLength;
    }
    // The limited key: a burst of 3, the clock standing still: the 4th and 5th are 429s.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await api.get(`/v1/sales/active.json?apikey=${limitedKey}`, { headers: { "Accept-Encoding": "gzip" } });
      await r.arrayBuffer();
      statuses.push(r.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // A request without a valid key is nobody's.
    expect((await api.get(`/v1/sales/active.json?apikey=${"x".repeat(32)}`)).status).toBe(401);
    await usage.flush();
    const test = await countsBetween(db, ["test"], now() - HOUR_MS, now() + HOUR_MS);
    expect(test).toEqual({ ok: 1, not_modified: 1, client_error: 2, limited: 0, server_error: 0, bytes });
    const limited = await countsOnDay(db, ["limited"], now());
    expect(limited).toMatchObject({ ok: 3, not_modified: 0, client_error: 0, limited: 2, server_error: 0 });
    expect(await countsOnDay(db, ["test", "limited"], now())).toMatchObject({ ok: 4, client_error: 2, limited: 2 });
    expect(await lastUsed(db, ["test", "limited", "unused"])).toEqual(
      new Map([
        ["test", now()],
        ["limited", now()],
      ]),
    );
    expect(usage.stats()).toMatchObject({ rows: 0, dropped: 0, failures: 0 });
  });

  it("answers GET /v1/usage.json with the key's limits, burst left and counts, taking no token", async () => {
    /** The same requests by endpoint: all to the sale list (the 429s too). */
    const ENDPOINTS_USED = [
      {
        endpoint: "sale_list",
        requests: 5,
        ok: 3,
        not_modified: 0,
        client_error: 0,
        limited: 2,
        server_error: 0,
        bytes: expect.any(Number) as number,
      },
    ];
    // The limited key's bucket is empty (the clock still stands): usage.json is answered anyway, and is not counted
    // against the limit, but is counted as a request.
    const r = await api.get(`/v1/usage.json?apikey=${limitedKey}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("ratelimit-remaining")).toBe("0");
    const body = (await r.json()) as Record<string, unknown>;
    expect(body).toEqual({
      key: "limited",
      limits: { rate: 1, burst: 3 },
      burst: { remaining: 0, reset: 3 },
      usage: {
        today: {
          since: "2026-11-22T00:00:00Z",
          requests: 5,
          ok: 3,
          not_modified: 0,
          client_error: 0,
          limited: 2,
          server_error: 0,
          bytes: expect.any(Number) as number,
          endpoints: ENDPOINTS_USED,
        },
        last_hour: {
          since: "2026-11-22T16:00:00Z",
          requests: 5,
          ok: 3,
          not_modified: 0,
          client_error: 0,
          limited: 2,
          server_error: 0,
          bytes: expect.any(Number) as number,
          endpoints: ENDPOINTS_USED,
        },
      },
    });
    // Two seconds on, two tokens are back; JSONP too.
    api.clock.now += 2;
    const js = await api.get(`/v1/usage.json?apikey=${limitedKey}&callback=cb`);
    expect(js.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
    expect(await js.text()).toMatch(
      /^\/\*\*\/cb\(\{"key":"limited","limits":\{"rate":1,"burst":3\},"burst":\{"remaining":2,/,
    );
    // Without a valid key: the usual 401.
    expect((await api.get(`/v1/usage.json`)).status).toBe(401);
  });

  it("counts a batch sent twice (its acknowledgement lost) once", async () => {
    const batch = {
      id: `twice-${Math.random()}`,
      rows: [
        {
          key: "twice",
          route: "sale_list" as const,
          minute: now() - (now() % 60_000),
          counts: [5, 0, 0, 0, 0, 50],
          last: now(),
        },
      ],
    };
    expect(await recordBatch(db, batch, now())).toBe(true);
    expect(await recordBatch(db, batch, now())).toBe(false);
    expect(await countsOnDay(db, ["twice"], now())).toMatchObject({ ok: 5, bytes: 50 });
  });

  it("gives hourly and daily series with every period present, and prunes minutes past 48 h and days past 400", async () => {
    const hours = await series(db, ["test"], HOUR_MS, now() - 47 * HOUR_MS, now() + 1);
    expect(hours).toHaveLength(48);
    expect(hours.at(-1)).toMatchObject({ at: now() - (now() % HOUR_MS), counts: { ok: 1, client_error: 2 } });
    expect(hours.slice(0, -1).every((p) => p.counts.ok + p.counts.client_error === 0)).toBe(true);
    const days = await series(db, ["test"], DAY_MS, now() - 29 * DAY_MS, now() + 1);
    expect(days).toHaveLength(30);
    expect(days.at(-1)!.counts.ok).toBe(1);
    const old = {
      id: `old-${Math.random()}`,
      rows: [
        {
          key: "old",
          route: "sale_list" as const,
          minute: now() - 49 * HOUR_MS,
          counts: [1, 0, 0, 0, 0, 1],
          last: now() - 49 * HOUR_MS,
        },
        {
          key: "old",
          route: "sale_list" as const,
          minute: now() - 401 * DAY_MS,
          counts: [1, 0, 0, 0, 0, 1],
          last: now() - 401 * DAY_MS,
        },
      ],
    };
    await recordBatch(db, old, now());
    await pruneUsage(db, now());
    expect(await countsBetween(db, ["old"], 0, now())).toMatchObject({ ok: 0 });
    expect(await countsOnDay(db, ["old"], now() - 49 * HOUR_MS)).toMatchObject({ ok: 1 });
    expect(await countsOnDay(db, ["old"], now() - 401 * DAY_MS)).toMatchObject({ ok: 0 });
    expect(await countsOnDay(db, ["test"], now())).toMatchObject({ ok: 1 });
  });
});

describe("a usage store that cannot be reached", () => {
  it("PostgreSQL stopped for 30 s: requests go on being counted, and are all stored once it is back", async () => {
    // One clock for the server and the hand-over, seconds.
    const clock = { now: T0 + 3600 };
    const now = () => clock.now * 1000;
    const usage = startUsage({ databaseUrl: postgres.url, flushMs: 3_600_000, maxRows: 1000, figuresTtlMs: 0, now });
    const api = await startTestApi(undefined, { usage, clock: now });
    const db = await openDatabase(postgres.url);
    const key = await createKey(api.keysFile, "outage", new Date(), { rate: 1e9, burst: 1e9 });
    await api.handler.reload();
    try {
      await api.get(`/v1/sales/active.json?apikey=${key}`);
      await usage.flush();
      expect(usage.stats().failures).toBe(0);
      await postgres.stop();
      // 30 s of requests, one every 5 s, each flush failing.
      for (let i = 0; i < 6; i++) {
        clock.now += 5;
        expect((await api.get(`/v1/sales/active.json?apikey=${key}`)).status).toBe(200);
        await usage.flush();
      }
      expect(usage.stats().failures).toBe(6);
      expect(usage.stats().rows).toBeGreaterThan(0);
      // While it is down, usage.json still answers (its usage is null).
      expect(((await (await api.get(`/v1/usage.json?apikey=${key}`)).json()) as { usage: unknown }).usage).toBeNull();
      await postgres.restart();
      await usage.flush();
      await usage.flush();
      expect(usage.stats()).toMatchObject({ rows: 0, dropped: 0 });
      // 1 before, 6 during, 1 usage.json during the outage.
      const day = await countsOnDay(db, ["outage"], now());
      expect(day.ok).toBe(8);
    } finally {
      await usage.close();
      await api.close();
      await db.close();
    }
  });

  it("SQLite whose directory does not exist yet: counted meanwhile, stored once it can be opened", async () => {
    const dir = join(await tempDir("fsa-usage-later-"), "later");
    const now = () => T0 * 1000;
    const usage = startUsage({
      databaseUrl: join(dir, "portal.db"),
      flushMs: 3_600_000,
      maxRows: 1000,
      figuresTtlMs: 0,
      now,
    });
    const api = await startTestApi(undefined, { usage });
    try {
      for (let i = 0; i < 3; i++) await api.get(`/v1/sales/active.json?apikey=${api.key}`);
      await usage.flush();
      expect(usage.stats()).toMatchObject({ failures: 1, batches: 0 });
      await mkdir(dir);
      await usage.flush();
      expect(usage.stats()).toMatchObject({ failures: 1, batches: 1, rows: 0 });
      const db = await openDatabase(join(dir, "portal.db"));
      expect(await countsOnDay(db, ["test"], now())).toMatchObject({ ok: 3 });
      await db.close();
    } finally {
      await usage.close();
      await api.close();
    }
  });
});

describe("a key's figures for GET /v1/usage.json", () => {
  it("are reused for their period, then answered at once for one period more while newer ones are read", async () => {
    const clock = { ms: T0 * 1000 };
    const usage = startUsage({
      databaseUrl: join(await tempDir("fsa-usage-figures-"), "portal.db"),
      flushMs: 3_600_000,
      maxRows: 1000,
      figuresTtlMs: 2_000,
      now: () => clock.ms,
    });
    const counted = async (n: number) => {
      for (let i = 0; i < n; i++) usage.meter.count("figures", ROUTE_INDEX.sale_list, 200, 10, clock.ms);
      await usage.flush();
    };
    const ok = async () => (await usage.figures("figures"))?.today.ok;
    try {
      await counted(1);
      expect(await ok()).toBe(1);
      await counted(2);
      clock.ms += 1_999;
      expect(await ok()).toBe(1); // within the period: the same figures
      clock.ms += 2; // expired by 1 ms: the old figures at once, and a new read started
      const stale = usage.figures("figures");
      expect((await stale)?.today.ok).toBe(1);
      // The new read lands: the next request gets it. A read of another key, asked after it, is answered after it
      // (the store's thread takes its requests in order, and SQLite's statements run to the end), so waiting for that
      // one waits for the new read by construction, however slow the thread is.
      await usage.figures("asked-after");
      expect(await ok()).toBe(3);
      // Two periods after a read, nothing old is answered: the request waits for the store.
      await counted(4);
      clock.ms += 4_000;
      expect(await ok()).toBe(7);
    } finally {
      await usage.close();
    }
  });
});
