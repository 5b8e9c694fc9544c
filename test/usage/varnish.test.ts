// Usage behind the shipped Varnish configuration, with the real varnishd and varnishncsa: a polling partner's
// requests answered from the cache (and the 429s of a key over its rate, which Varnish answers itself) never reach a
// server, so they are counted from Varnish's request log (src/usage/cache-log.ts) into the same store; together with
// the server's own counts every request is counted exactly once. Nothing written by either holds the key.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { openDatabase } from "../../src/db/database.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { followVarnish } from "../../src/usage/cache-log.ts";
import { startUsage } from "../../src/usage/hand-over.ts";
import type { Usage } from "../../src/usage/hand-over.ts";
import { countsOnDay } from "../../src/usage/store.ts";
import { iso, standardCatalog, startTestApi, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { startVarnish } from "../helpers/varnish.ts";
import type { Varnish } from "../helpers/varnish.ts";

const VARNISHNCSA = requireProgram("varnishncsa");
const VCL = fileURLToPath(new URL("../../deploy/varnish/default.vcl", import.meta.url));

let api: TestApi;
let varnish: Varnish;
let serverUsage: Usage;
let cacheUsage: Usage;
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = join(await tempDir("fsa-usage-varnish-"), "portal.db");
  const now = Math.floor(Date.now() / 1000);
  const catalog = standardCatalog();
  catalog.sales = catalog.sales.map((s) => ({ ...s, begins: iso(now - 3600), ends: iso(now + 86_400) }));
  const options = { databaseUrl, flushMs: 3_600_000, maxRows: 10_000, figuresTtlMs: 0, now: Date.now };
  serverUsage = startUsage(options);
  cacheUsage = startUsage(options);
  // The real clock: Varnish counts its TTLs on it. Varnish checks keys with the server's GET /edge/key, which it
  // answers to its proxies only.
  api = await startTestApi(catalog, { clock: Date.now, usage: serverUsage, trustProxy: ["127.0.0.1"] });
  varnish = await startVarnish(VCL, Number(new URL(api.url).port));
}, 60_000);

afterAll(async () => {
  await varnish?.stop();
  await serverUsage?.close();
  await cacheUsage?.close();
  await api?.close();
});

describe("usage behind Varnish", () => {
  it("counts the cache's hits from varnishncsa and the misses at the server: every request once", async () => {
    const follower = followVarnish({
      program: VARNISHNCSA,
      instance: varnish.instance,
      meter: cacheUsage.meter,
      now: Date.now,
      onExit: () => {},
    });
    const db = await openDatabase(databaseUrl);
    const today = () => countsOnDay(db, ["test"], Date.now());
    try {
      // varnishncsa reads the log from when it is attached: a probe with another key, until one of its hits is seen.
      const probeKey = await createKey(api.keysFile, "probe", new Date(), { rate: 1e9, burst: 1e9 });
      // A key of 1 request a second, in bursts of 2, for the edge's 429s.
      const slowKey = await createKey(api.keysFile, "slow", new Date(), { rate: 1, burst: 2 });
      await api.handler.reload();
      for (let deadline = Date.now() + 10_000; follower.counted === 0 && Date.now() < deadline;)
        await (await fetch(`${varnish.url}/v1/products/sizes.json?apikey=${probeKey}`)).arrayBuffer();
      expect(follower.counted).toBeGreaterThan(0);
      const polls = 40;
      let hits = 0;
      for (let i = 0; i < polls; i++) {
        const r = await fetch(`${varnish.url}/v1/sales/active.json?apikey=${api.key}`);
        await r.arrayBuffer();
        expect(r.status).toBe(200);
        if (r.headers.get("x-cache") === "HIT") hits++;
      }
      // One 404 a cache keeps (a product not on sale), asked twice: one miss, one hit.
      for (let i = 0; i < 2; i++)
        await (await fetch(`${varnish.url}/v1/products/999999/detail.json?apikey=${api.key}`)).arrayBuffer();
      expect(hits).toBeGreaterThanOrEqual(polls - 2);
      // varnishncsa writes a request's line once Varnish has logged it: hand over until every request is stored
      // (bounded), then check that none is counted twice.
      await serverUsage.flush();
      for (let deadline = Date.now() + 10_000; Date.now() < deadline;) {
        await cacheUsage.flush();
        const c = await today();
        if (c.ok + c.client_error >= polls + 2) break;
        await new Promise((r) => setImmediate(r));
      }
      expect(await today()).toMatchObject({ ok: polls, client_error: 2, not_modified: 0, limited: 0, server_error: 0 });
      // Over its rate at the edge: Varnish's own 429s, counted from its log (the API never sees them).
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await fetch(`${varnish.url}/v1/sales/active.json?apikey=${slowKey}`);
        await r.arrayBuffer();
        statuses.push(r.status);
      }
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
      const slow = () => countsOnDay(db, ["slow"], Date.now());
      await serverUsage.flush();
      for (let deadline = Date.now() + 10_000; Date.now() < deadline;) {
        await cacheUsage.flush();
        const c = await slow();
        if (c.ok + c.limited >= 5) break;
        await new Promise((r) => setImmediate(r));
      }
      expect(await slow()).toMatchObject({
        ok: statuses.filter((s) => s === 200).length,
        limited: statuses.filter((s) => s === 429).length,
      });
      // What is stored holds the key's name, never the key.
      const file = await readFile(databaseUrl);
      expect(file.includes(Buffer.from(api.key))).toBe(false);
    } finally {
      follower.stop();
      await db.close();
    }
  });
});
