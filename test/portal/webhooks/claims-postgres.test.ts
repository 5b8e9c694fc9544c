// Issue 38's "no event is sent twice by two processes at once", at the claim itself: four pools (as four processes
// would have) claim from one real PostgreSQL at the same moment, again and again, until nothing is left to claim. No
// delivery is claimed twice and no endpoint has more than its limit claimed over all of them. Two things keep it so:
// the endpoints' rows locked FOR UPDATE SKIP LOCKED while their deliveries are counted, and the UPDATE taking a row
// only while it is due. With both taken out, all 160 claims were made twice here; either alone kept this test passing.
// The two-process test (webhooks-processes.test.ts) shows the same end to end, but its claims rarely meet; these all
// start together.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase } from "../../../src/db/database.ts";
import type { PortalDatabase } from "../../../src/db/database.ts";
import { migrate } from "../../../src/db/migrations.ts";
import { claimDue, recordEvents } from "../../../src/portal/webhooks/queue.ts";
import type { Claimed } from "../../../src/portal/webhooks/queue.ts";
import { startPostgres } from "../postgres-server.ts";
import type { PostgresServer } from "../postgres-server.ts";
import { seedEndpoints } from "../webhook-receiver.ts";

const NOW = Date.parse("2026-11-22T19:00:00Z");
const ENDPOINTS = 40;
const EVENTS = 10;
const LIMIT = 4;
const POOLS = 4;

let postgres: PostgresServer;
const pools: PortalDatabase[] = [];
beforeAll(async () => {
  postgres = await startPostgres();
  for (let i = 0; i < POOLS; i++) pools.push(await openDatabase(postgres.url));
}, 120_000);
afterAll(async () => {
  for (const p of pools) await p.close();
  await postgres?.stop();
});

it("four pools claiming at once never claim a delivery twice, nor an endpoint past its limit", async () => {
  const db = pools[0]!;
  await migrate(db, NOW);
  const secretKey = randomBytes(32);
  await seedEndpoints(db, secretKey, ENDPOINTS, (n) => `https://hooks.example.test/${n}`, NOW);
  const events = Array.from({ length: EVENTS }, (_, n) => ({
    id: `${NOW / 1000 + n}.1.CLAIMSAAAAAAAA${n % 10}`,
    type: "sale.begins",
    data: JSON.stringify({ sale: { store: "women" }, at: new Date(NOW + n).toISOString() }),
  }));
  expect(await recordEvents(db, "events", events, NOW)).toBe(ENDPOINTS * EVENTS);

  // Each pool claims a few at a time until a claim comes back empty; all four start together, every round.
  const claimed: Claimed[] = [];
  const claimUntilEmpty = async (pool: PortalDatabase) => {
    for (;;) {
      const got = await claimDue(pool, NOW, NOW + 60_000, LIMIT, 8);
      if (got.length === 0) return;
      claimed.push(...got);
    }
  };
  await Promise.all(pools.map(claimUntilEmpty));

  const ids = claimed.map((c) => c.id);
  expect(ids.length - new Set(ids).size).toBe(0); // no delivery claimed twice
  const perEndpoint = new Map<string, number>();
  for (const c of claimed) perEndpoint.set(c.endpoint.id, (perEndpoint.get(c.endpoint.id) ?? 0) + 1);
  expect(Math.max(...perEndpoint.values())).toBe(LIMIT); // never past it, and reached
  expect(claimed).toHaveLength(ENDPOINTS * LIMIT);
}, 60_000);
