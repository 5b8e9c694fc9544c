// Issue 38's webhooks on a real PostgreSQL shared by two delivering portals (two pools, as two processes would have):
// many deliveries, both senders at once, and every event reaches each receiver exactly once, never more than an
// endpoint's concurrency limit at a time (claims under a lease, the endpoint's row locked FOR UPDATE SKIP LOCKED).
// The queue is fed through recordEvents, the function the stream reader calls for each event it reads (the stream
// itself is tested on SQLite in webhooks.test.ts).
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { recordEvents } from "../../src/portal/webhooks/queue.ts";
import { withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { SmtpServer } from "./smtp-server.ts";
import { heldTimers, startReceiver } from "./webhook-receiver.ts";

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

const EVENTS = 150;
const PER_ENDPOINT = 3;

it("two portals on one PostgreSQL send each delivery once, within each endpoint's limit", async () => {
  const secretKey = randomBytes(32);
  const options = {
    databaseUrl: postgres.url,
    secretKey,
    webhookSettings: {
      allow: ["127.0.0.0/8"],
      deliverer: { perEndpoint: PER_ENDPOINT, senders: 16 },
      scheduler: heldTimers().scheduler,
    },
  };
  const [a, b] = [await startTestPortal(smtp, options), await startTestPortal(smtp, options)];
  const receivers = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
  try {
    const client = new PortalClient(a.url);
    await signUpAndVerify(client, smtp, { email: "pg-owner@example.test" });
    for (const r of receivers) {
      r.delayMs = 5; // the requests of one endpoint overlap
      await client.get("/webhooks");
      expect((await client.post("/webhooks", { url: `${r.url}/hook` })).status).toBe(200);
    }
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      id: `1795885200.${i}.AAAAAAAAAAAAAAAA`,
      type: "sale.begins",
      data: JSON.stringify({ sale: { store: "women", sale_key: `s${i}` }, at: "2026-11-22T17:00:00Z" }),
    }));
    // Both portals read the same events (as two processes following the stream would): queued once an endpoint.
    const queued = await Promise.all([
      recordEvents(a.db, "events", events, a.clock.now),
      recordEvents(b.db, "events", events, b.clock.now),
    ]);
    expect(queued[0] + queued[1]).toBe(EVENTS * receivers.length);
    await Promise.all([a.webhooks!.deliverer.flush(), b.webhooks!.deliverer.flush()]);
    await Promise.all([a.webhooks!.deliverer.flush(), b.webhooks!.deliverer.flush()]);
    for (const r of receivers) {
      const ids = r.received.map((x) => x.id);
      expect(ids).toHaveLength(EVENTS);
      expect(new Set(ids).size).toBe(EVENTS);
      expect(r.maxInFlight).toBeLessThanOrEqual(PER_ENDPOINT);
      expect(r.maxInFlight).toBeGreaterThan(1);
    }
    const rows = await a.db.all("SELECT state, COUNT(*) AS n FROM webhook_deliveries GROUP BY state");
    expect(rows).toEqual([{ state: "delivered", n: EVENTS * receivers.length }]);
  } finally {
    for (const r of receivers) await r.close();
    await a.close();
    await b.close();
  }
}, 120_000);
