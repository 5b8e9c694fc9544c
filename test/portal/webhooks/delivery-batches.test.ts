// The sender at a sale's instant (issue 38: deliveries start within 1 s of it): one event queued for 120 endpoints
// on SQLite is sent to each once, through a real receiver on 127.0.0.1, with claims and outcomes written a batch at a
// time (a claim for up to `senders` deliveries, the attempts that ended meanwhile in one transaction), not a
// transaction or two for each delivery: the database's transactions are counted on the real database. An endpoint
// with more deliveries than its limit is never sent more than the limit at once; a sender closed with deliveries
// claimed and not sent gives them back, due at once and their attempt not counted. A batch of 200 outcomes is written
// in a few statements (not three an attempt), an endpoint's successes and failures among them applied in order. A
// sender is free for the next delivery once its answer came, not once its outcome is written. The warm-up before a
// burst unseals the enabled endpoints' secrets and connects to nothing.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { openDatabase } from "../../../src/db/database.ts";
import type { PortalDatabase } from "../../../src/db/database.ts";
import { migrate } from "../../../src/db/migrations.ts";
import { finishAttempts } from "../../../src/portal/webhooks/attempts.ts";
import type { FinishedAttempt } from "../../../src/portal/webhooks/attempts.ts";
import { createAddressGuard } from "../../../src/portal/webhooks/address-guard.ts";
import { claimDue, recordEvents } from "../../../src/portal/webhooks/queue.ts";
import type { Claimed } from "../../../src/portal/webhooks/queue.ts";
import { createSecretCache } from "../../../src/portal/webhooks/signing.ts";
import { warmDeliveries } from "../../../src/portal/webhooks/warm-up.ts";
import { tempDir } from "../../helpers/fixture.ts";
import { heldDeliverer, seedEndpoints, startReceiver } from "../webhook-receiver.ts";
import type { Receiver } from "../webhook-receiver.ts";

const secretKey = randomBytes(32);
const NOW = Date.parse("2026-11-22T19:00:00Z");
const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of opened.splice(0).reverse()) await c.close();
});

/** A SQLite database with `count` endpoints (20 an organisation) wanting sale.begins at `receiver`, and its transactions counted. */
async function withEndpoints(receiver: Receiver, count: number) {
  const db = await openDatabase(join(await tempDir("fsa-wh-batches-"), "portal.db"));
  opened.push(db);
  await migrate(db, NOW);
  await seedEndpoints(db, secretKey, count, (n) => `${receiver.url}/${n}`, NOW);
  let transactions = 0;
  const counted: PortalDatabase = {
    ...db,
    dialect: db.dialect,
    transaction: (work) => {
      transactions++;
      return db.transaction(work);
    },
  };
  return { db, counted, transactions: () => transactions };
}

const event = (n: number) => ({
  id: `${NOW / 1000 + n}.1.AAAAAAAAAAAAAAA${n}`,
  type: "sale.begins",
  data: JSON.stringify({ sale: { store: "women" }, at: new Date(NOW + n * 1000).toISOString() }),
});

function deliverer(db: PortalDatabase, senders: number) {
  const d = heldDeliverer(db, secretKey, NOW, { senders });
  opened.push(d);
  return d;
}

it("sends a sale's event to 120 endpoints once each, claiming and recording a batch at a time", async () => {
  const receiver = await startReceiver();
  opened.push(receiver);
  const { db, counted, transactions } = await withEndpoints(receiver, 120);
  expect(await recordEvents(db, "events", [event(0)], NOW)).toBe(120);
  await deliverer(counted, 32).flush();
  expect(receiver.received.map((r) => r.path).sort()).toEqual(Array.from({ length: 120 }, (_, n) => `/${n}`).sort());
  const states = await db.all("SELECT state, attempts, COUNT(*) AS n FROM webhook_deliveries GROUP BY state, attempts");
  expect(states).toEqual([{ state: "delivered", attempts: 1, n: 120 }]);
  // Claims of 32 (and empty ones as the last sends end) and the outcomes of 10 ms at a time: 33 here; 240 before,
  // one claim and one outcome a delivery.
  expect(transactions()).toBeLessThan(60);
});

it("keeps an endpoint's limit with its deliveries claimed ahead, and gives back on close what it did not send", async () => {
  const receiver = await startReceiver();
  opened.push(receiver);
  receiver.delayMs = 20;
  const { db } = await withEndpoints(receiver, 1);
  await recordEvents(
    db,
    "events",
    Array.from({ length: 12 }, (_, n) => event(n)),
    NOW,
  );
  await deliverer(db, 32).flush();
  expect(receiver.received).toHaveLength(12);
  expect(receiver.maxInFlight).toBeLessThanOrEqual(4);

  // Two senders: the second batch claimed while the first is in flight, then the sender closed.
  const { db: second } = await withEndpoints(receiver, 4);
  await recordEvents(second, "events", [event(0)], NOW);
  receiver.delayMs = 200;
  const d = deliverer(second, 2);
  d.wake();
  const leased = async () => (await second.all("SELECT id FROM webhook_deliveries WHERE lease_until > 0")).length;
  while ((await leased()) < 4) await new Promise((r) => setTimeout(r, 5));
  await d.close();
  const left = await second.all("SELECT state, attempts, lease_until FROM webhook_deliveries ORDER BY state");
  expect(left.filter((r) => r.state === "delivered")).toHaveLength(2);
  expect(left.filter((r) => r.state === "pending")).toEqual([
    { state: "pending", attempts: 0, lease_until: 0 },
    { state: "pending", attempts: 0, lease_until: 0 },
  ]);
});

it("writes a batch of outcomes in a few statements, an endpoint's successes and failures applied in order", async () => {
  const receiver = await startReceiver();
  opened.push(receiver);
  const { db } = await withEndpoints(receiver, 100);
  await recordEvents(db, "events", [event(0), event(1)], NOW);
  const claimed = await claimDue(db, NOW, NOW + 60_000, 4, 200);
  expect(claimed).toHaveLength(200);
  const [first, second] = [
    claimed.filter((c) => c.event.id === event(0).id),
    claimed.filter((c) => c.event.id === event(1).id),
  ];
  // Endpoint 0: failing since an earlier day; its first delivery fails again, its second succeeds.
  const e0 = first[0]!.endpoint.id;
  await db.run("UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?", [NOW - 86_400_000, e0]);
  // Endpoint 1: its first delivery succeeds, its second fails (a streak from the second's end).
  const e1 = first[1]!.endpoint.id;
  const outcome = (c: Claimed, ok: boolean, at: number): FinishedAttempt => ({
    c,
    result: { status: ok ? 204 : 500, latencyMs: 3, answer: ok ? "" : "answer 500" },
    ok,
    retryAt: ok ? null : at + 5_000,
    now: at,
  });
  const of = (list: Claimed[], id: string) => list.find((c) => c.endpoint.id === id)!;
  const attempts = [
    outcome(of(first, e0), false, NOW + 1),
    outcome(of(first, e1), true, NOW + 2),
    outcome(of(second, e0), true, NOW + 3),
    outcome(of(second, e1), false, NOW + 4),
    ...claimed.filter((c) => c.endpoint.id !== e0 && c.endpoint.id !== e1).map((c) => outcome(c, true, NOW + 5)),
  ];
  let statements = 0;
  const counted: PortalDatabase = {
    ...db,
    dialect: db.dialect,
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          all: (sql, params) => (statements++, tx.all(sql, params)),
          run: (sql, params) => (statements++, tx.run(sql, params)),
        }),
      ),
  };
  const since = await finishAttempts(counted, attempts);
  expect(since.slice(0, 4)).toEqual([NOW - 86_400_000, null, null, NOW + 4]);
  expect(since.slice(4).every((s) => s === null)).toBe(true);
  // 200 outcomes: the log's lines, the deliveries, the endpoints that only succeeded, and endpoints 0 and 1's four;
  // 600 before, three an attempt.
  expect(statements).toBeLessThanOrEqual(10);
  const streaks = await db.all("SELECT id, failing_since FROM webhook_endpoints WHERE failing_since IS NOT NULL");
  expect(streaks).toEqual([{ id: e1, failing_since: NOW + 4 }]);
  const states = await db.all(
    "SELECT state, next_at, lease_until, COUNT(*) AS n FROM webhook_deliveries GROUP BY state, next_at, lease_until ORDER BY state, next_at",
  );
  expect(states).toEqual([
    { state: "delivered", next_at: NOW + 2, lease_until: 0, n: 1 },
    { state: "delivered", next_at: NOW + 3, lease_until: 0, n: 1 },
    { state: "delivered", next_at: NOW + 5, lease_until: 0, n: 196 },
    { state: "pending", next_at: NOW + 5_001, lease_until: 0, n: 1 },
    { state: "pending", next_at: NOW + 5_004, lease_until: 0, n: 1 },
  ]);
  const log = await db.all("SELECT status, COUNT(*) AS n FROM webhook_attempts GROUP BY status ORDER BY status");
  expect(log).toEqual([
    { status: 204, n: 198 },
    { status: 500, n: 2 },
  ]);
});

it("frees a sender once its answer came, before its outcome is written", async () => {
  const receiver = await startReceiver();
  opened.push(receiver);
  const { db } = await withEndpoints(receiver, 2);
  await recordEvents(db, "events", [event(0)], NOW);
  // Every transaction after the first (the claim of both deliveries) waits for the gate: the outcomes' writes.
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let transactions = 0;
  const gated: PortalDatabase = {
    ...db,
    dialect: db.dialect,
    transaction: async (work) => {
      if (transactions++ > 0) await gate;
      return db.transaction(work);
    },
  };
  const d = heldDeliverer(gated, secretKey, NOW, { senders: 1 });
  opened.push(d);
  d.wake();
  // One sender: the second delivery is sent while the first's outcome waits to be written (before, only after it).
  while (receiver.received.length < 2) await new Promise((r) => setTimeout(r, 5));
  expect(await db.all("SELECT state FROM webhook_deliveries WHERE state = 'delivered'")).toEqual([]);
  open();
  await d.flush();
  expect(await db.all("SELECT state, attempts FROM webhook_deliveries")).toEqual([
    { state: "delivered", attempts: 1 },
    { state: "delivered", attempts: 1 },
  ]);
}, 10_000);

it("readies the enabled endpoints' secrets and URLs before a burst, connecting to nothing", async () => {
  let connections = 0;
  const server = createNetServer((socket) => {
    connections++;
    socket.destroy();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  opened.push({ close: () => new Promise((resolve) => server.close(resolve)) });
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const { db } = await withEndpoints({ url } as Receiver, 3);
  await db.run("UPDATE webhook_endpoints SET enabled = 0 WHERE id = (SELECT MIN(id) FROM webhook_endpoints)");
  const cache = createSecretCache(secretKey, 10);
  const unsealed: (string | null)[] = [];
  const readied = await warmDeliveries(
    db,
    createAddressGuard(["127.0.0.0/8"]),
    (id, sealed) => {
      const secret = cache(id, sealed);
      unsealed.push(secret);
      return secret;
    },
    10,
    NOW,
  );
  expect(readied).toBe(2);
  expect(unsealed).toHaveLength(2);
  expect(unsealed.every((s) => s !== null && s.startsWith("whsec_"))).toBe(true);
  // The deliverer's own warm-up sends nothing either.
  const d = heldDeliverer(db, secretKey, NOW);
  opened.push(d);
  await d.warm();
  expect(connections).toBe(0);
});
