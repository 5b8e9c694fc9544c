// Usage behind the shipped HAProxy configuration (keys checked against its map, one cached copy for every key), with
// the real haproxy: the requests it answers from its cache, and its 429s, never reach a server, so they are counted
// from its log (`cache=`, `server=`, `key=<name>`; src/usage/cache-log.ts, followed as `tail -F` does) into the same
// store as the server's own counts: every request counted once, under its key's name.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { startHaproxyFront } from "../../scripts/lib/haproxy-front.ts";
import type { HaproxyFront } from "../../scripts/lib/haproxy-front.ts";
import { createHaproxyFront, keyStatesOf, renderHaproxyMap } from "../../src/edge/haproxy.ts";
import { createKey, loadKeysFile } from "../../src/keys/keys-file.ts";
import { openDatabase } from "../../src/db/database.ts";
import { followHaproxy } from "../../src/usage/cache-log.ts";
import { startUsage } from "../../src/usage/hand-over.ts";
import type { Usage } from "../../src/usage/hand-over.ts";
import { countsOnDay } from "../../src/usage/store.ts";
import type { Counts } from "../../src/usage/store.ts";
import { freePort, iso, standardCatalog, startTestApi, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

const TAIL = requireProgram("tail");

let api: TestApi;
let haproxy: HaproxyFront;
let serverUsage: Usage;
let frontUsage: Usage;
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = join(await tempDir("fsa-usage-haproxy-"), "portal.db");
  const now = Math.floor(Date.now() / 1000);
  const catalog = standardCatalog();
  catalog.sales = catalog.sales.map((s) => ({ ...s, begins: iso(now - 3600), ends: iso(now + 86_400) }));
  const options = { databaseUrl, flushMs: 3_600_000, maxRows: 10_000, figuresTtlMs: 0, now: Date.now };
  serverUsage = startUsage(options);
  frontUsage = startUsage(options);
  // The real clock (HAProxy's cache counts on it); HAProxy's map is written from the keys file.
  api = await startTestApi(catalog, { clock: Date.now, usage: serverUsage, trustProxy: ["127.0.0.1"] });
  haproxy = await startHaproxyFront({
    program: requireProgram("haproxy"),
    dir: await tempDir("fsa-haproxy-"),
    port: await freePort(),
    upstreamPort: Number(new URL(api.url).port),
    map: renderHaproxyMap(keyStatesOf(await loadKeysFile(api.keysFile), Date.now())),
  });
}, 60_000);

afterAll(async () => {
  await haproxy?.stop();
  await serverUsage?.close();
  await frontUsage?.close();
  await api?.close();
});

describe("usage behind HAProxy", () => {
  it("counts HAProxy's hits and 429s from its log and the rest at the server: every request once", async () => {
    const follower = followHaproxy({
      program: TAIL,
      file: haproxy.log,
      meter: frontUsage.meter,
      now: Date.now,
      onExit: () => {},
    });
    const db = await openDatabase(databaseUrl);
    /** Hands both sides over until `key`'s stored requests reach `n` (bounded: lines reach the log after the answer). */
    const stored = async (key: string, n: number): Promise<Counts> => {
      await serverUsage.flush();
      for (let deadline = Date.now() + 10_000; Date.now() < deadline;) {
        await frontUsage.flush();
        const c = await countsOnDay(db, [key], Date.now());
        if (c.ok + c.not_modified + c.client_error + c.limited >= n) return c;
        await new Promise((r) => setImmediate(r));
      }
      return countsOnDay(db, [key], Date.now());
    };
    try {
      const probeKey = await createKey(api.keysFile, "probe", new Date(), { rate: 1e9, burst: 1e9 });
      const slowKey = await createKey(api.keysFile, "slow", new Date(), { rate: 1, burst: 2 });
      await api.handler.reload();
      await createHaproxyFront("haproxy", haproxy.socket).push(
        keyStatesOf(await loadKeysFile(api.keysFile), Date.now()),
      );
      // tail starts at the file's end: a probe with another key until one of its hits is seen.
      for (let deadline = Date.now() + 10_000; follower.counted === 0 && Date.now() < deadline;)
        await (await fetch(`${haproxy.url}/v1/products/sizes.json?apikey=${probeKey}`)).arrayBuffer();
      expect(follower.counted).toBeGreaterThan(0);
      const polls = 30;
      let hits = 0;
      for (let i = 0; i < polls; i++) {
        const r = await fetch(`${haproxy.url}/v1/sales/active.json?apikey=${api.key}`);
        await r.arrayBuffer();
        expect(r.status).toBe(200);
        if (r.headers.get("x-cache") === "HIT") hits++;
      }
      expect(hits).toBeGreaterThanOrEqual(polls - 2);
      expect(await stored("test", polls)).toMatchObject({ ok: polls, not_modified: 0, client_error: 0, limited: 0 });
      // Over its rate at the edge: HAProxy's own 429s (the API never sees them).
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await fetch(`${haproxy.url}/v1/sales/active.json?apikey=${slowKey}`);
        await r.arrayBuffer();
        statuses.push(r.status);
      }
      const limited = statuses.filter((s) => s === 429).length;
      expect(limited).toBeGreaterThan(0);
      expect(await stored("slow", 10)).toMatchObject({ ok: 10 - limited, limited });
    } finally {
      follower.stop();
      await db.close();
    }
  });
});
