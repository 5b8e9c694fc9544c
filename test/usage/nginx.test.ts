// Usage behind the shipped nginx configuration (keys checked at the edge, one cached copy for every key), with the
// real nginx: the requests it answers from its cache, and its 429s, never reach a server, so they are counted from
// its access log (`key=<name>`, `cache=`, `upstream=`; src/usage/cache-log.ts, followed as `tail -F` does) into the
// same store as the server's own counts: every request counted once, under its key's name.
import { afterAll, beforeAll, describe, it } from "vitest";
import { join } from "node:path";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import type { Front, NginxLogs } from "../../scripts/lib/fronts.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { openDatabase } from "../../src/db/database.ts";
import { followNginx } from "../../src/usage/cache-log.ts";
import { startUsage } from "../../src/usage/hand-over.ts";
import type { Usage } from "../../src/usage/hand-over.ts";
import { iso, standardCatalog, startTestApi, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { expectHitsAndLimitsCounted, storedWhen } from "./front-hits.ts";
import { startNginx } from "../helpers/fronts.ts";

const TAIL = requireProgram("tail");

let api: TestApi;
let nginx: Front & { logs: NginxLogs };
let serverUsage: Usage;
let frontUsage: Usage;
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = join(await tempDir("fsa-usage-nginx-"), "portal.db");
  const now = Math.floor(Date.now() / 1000);
  const catalog = standardCatalog();
  catalog.sales = catalog.sales.map((s) => ({ ...s, begins: iso(now - 3600), ends: iso(now + 86_400) }));
  const options = { databaseUrl, flushMs: 3_600_000, maxRows: 10_000, figuresTtlMs: 0, now: Date.now };
  serverUsage = startUsage(options);
  frontUsage = startUsage(options);
  // The real clock (nginx's cache counts on it); nginx checks keys with GET /edge/key, answered to proxies only.
  api = await startTestApi(catalog, { clock: Date.now, usage: serverUsage, trustProxy: ["127.0.0.1"] });
  nginx = await startNginx(Number(new URL(api.url).port));
}, 60_000);

afterAll(async () => {
  await nginx?.stop();
  await serverUsage?.close();
  await frontUsage?.close();
  await api?.close();
});

describe("usage behind nginx", () => {
  it("counts nginx's hits and 429s from its access log and the rest at the server: every request once", async () => {
    const follower = followNginx({
      program: TAIL,
      file: nginx.logs.access,
      meter: frontUsage.meter,
      now: Date.now,
      onExit: () => {},
    });
    const db = await openDatabase(databaseUrl);
    const stored = storedWhen(db, serverUsage, frontUsage);
    try {
      const probeKey = await createKey(api.keysFile, "probe", new Date(), { rate: 1e9, burst: 1e9 });
      const slowKey = await createKey(api.keysFile, "slow", new Date(), { rate: 1, burst: 2 });
      await api.handler.reload();
      // tail starts at the file's end: a probe with another key until one of its hits is seen.
      await expectHitsAndLimitsCounted({
        url: nginx.url,
        counted: () => follower.counted,
        stored,
        keys: { test: api.key, slow: slowKey, probe: probeKey },
      });
    } finally {
      follower.stop();
      await db.close();
    }
  });
});
