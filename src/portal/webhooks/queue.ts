// The delivery queue in the database: the events read from the API's stream, enqueued for every endpoint that wants
// them in one transaction with the stream's position; deliveries claimed under a lease (PostgreSQL: the endpoint's
// row locked FOR UPDATE SKIP LOCKED while its deliveries are counted and claimed, so that processes sharing the queue
// never claim one delivery at once nor pass an endpoint's concurrency limit); each attempt logged.
import type { PortalDatabase, Queries } from "../../db/database.ts";
import { first } from "../../db/database.ts";
import { randomId } from "../secrets.ts";
import { enabledEndpoints, endpointOf, wants } from "./endpoints.ts";
import type { Endpoint } from "./endpoints.ts";

/** An event as the stream sent it: its ID, type and data (the JSON of the `data` lines, without affid). */
export interface StreamEvent {
  id: string;
  type: string;
  data: string;
}

/** A delivery claimed by a sender: send it, then finish it with its lease. */
export interface Claimed {
  id: string;
  lease: string;
  /** Attempts made, this one counted. */
  attempts: number;
  endpoint: Endpoint;
  event: StreamEvent;
  /** When the portal read the event from the stream, ms (the payload's `timestamp`). */
  received: number;
}

/** The event's store and instant (ms), read from its data (a test event has neither). */
function storeAndAt(e: StreamEvent, now: number): { store: string; at: number } {
  try {
    const data = JSON.parse(e.data) as { sale?: { store?: unknown }; at?: unknown };
    const at = typeof data.at === "string" ? Date.parse(data.at) : NaN;
    return { store: typeof data.sale?.store === "string" ? data.sale.store : "", at: Number.isNaN(at) ? now : at };
  } catch {
    return { store: "", at: now };
  }
}

/** Rows a multi-row INSERT of deliveries holds (6 parameters each, far under PostgreSQL's 65,535). */
const INSERT_ROWS = 200;

/**
 * Queues a delivery of `eventId` to each of `endpointIds` (none to an endpoint that has one already), INSERT_ROWS to a
 * statement; `seq` orders them after those queued before. Returns how many were queued.
 */
async function queueDeliveries(tx: Queries, endpointIds: readonly string[], eventId: string, seq: number, now: number) {
  let queued = 0;
  for (let i = 0; i < endpointIds.length; i += INSERT_ROWS) {
    const ids = endpointIds.slice(i, i + INSERT_ROWS);
    queued += await tx.run(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, seq, state, attempts, next_at, lease, lease_until, created)
       VALUES ${ids.map(() => "(?, ?, ?, ?, 'pending', 0, ?, '', 0, ?)").join(", ")}
       ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
      ids.flatMap((endpointId) => [randomId(20), endpointId, eventId, seq, now, now]),
    );
  }
  return queued;
}

/** Stores an event (once) and returns its store. */
async function storeEvent(tx: Queries, e: StreamEvent, now: number): Promise<string> {
  const { store, at } = storeAndAt(e, now);
  await tx.run(
    `INSERT INTO webhook_events (id, type, store, at, received, data) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO NOTHING`,
    [e.id, e.type, store, at, now, e.data],
  );
  return store;
}

/**
 * Records `events` (read from the stream `cursor` names) and a delivery of each to every enabled endpoint that wants
 * it, with the stream's new position, in one transaction: a restart resumes after the last event recorded, and an event
 * recorded twice (two processes reading the stream) is queued once an endpoint. Returns the deliveries queued.
 */
export async function recordEvents(db: PortalDatabase, cursor: string, events: StreamEvent[], now: number) {
  if (events.length === 0) return 0;
  return db.transaction(async (tx) => {
    const endpoints = await enabledEndpoints(tx);
    let queued = 0;
    for (const [i, e] of events.entries()) {
      const store = await storeEvent(tx, e, now);
      const wanting = endpoints.filter((endpoint) => wants(endpoint, e.type, store)).map((endpoint) => endpoint.id);
      queued += await queueDeliveries(tx, wanting, e.id, now * 1000 + i, now);
    }
    await tx.run(
      `INSERT INTO webhook_cursor (name, last_id, updated) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET last_id = excluded.last_id, updated = excluded.updated`,
      [cursor, events.at(-1)!.id, now],
    );
    return queued;
  });
}

/** Where the stream `cursor` names was left: its last event's ID, or null. */
export async function readCursor(db: PortalDatabase, cursor: string): Promise<string | null> {
  const row = await first(db, "SELECT last_id FROM webhook_cursor WHERE name = ?", [cursor]);
  return row ? String(row.last_id) : null;
}

/** Records a test event, and its delivery to one endpoint. */
export async function queueTestEvent(db: PortalDatabase, endpointId: string, event: StreamEvent, now: number) {
  await db.transaction(async (tx) => {
    await storeEvent(tx, event, now);
    await queueDeliveries(tx, [endpointId], event.id, now * 1000, now);
  });
}

const DUE = "state = 'pending' AND next_at <= ? AND lease_until <= ?";

/**
 * Claims up to `max` due deliveries, oldest first, over every endpoint that has some and room under `limit` (its
 * deliveries in flight, over every process), each endpoint's oldest first, until `until`: in one transaction, however
 * many endpoints (a sale's instant queues a delivery for each of a thousand). On PostgreSQL the endpoints' rows are
 * locked FOR UPDATE SKIP LOCKED while their deliveries are counted again and claimed, so that a process sharing the
 * queue takes other endpoints meanwhile and no endpoint passes its limit. Empty when nothing could be claimed.
 *
 * Every statement reads the pending deliveries once (the `state, next_at` index), never once an endpoint: a
 * subquery per endpoint that SQLite answered from that index read every pending delivery for each endpoint, 300 ms a
 * claim with 1,000 queued, the event loop held all the while (bench/webhooks.ts).
 */
export async function claimDue(
  db: PortalDatabase,
  now: number,
  until: number,
  limit: number,
  max: number,
): Promise<Claimed[]> {
  return db.transaction(async (tx) => {
    const skipLocked = db.dialect === "postgres" ? " FOR UPDATE OF e SKIP LOCKED" : "";
    const rows = await tx.all(
      `SELECT e.* FROM webhook_endpoints e
       JOIN (SELECT endpoint_id,
               MIN(CASE WHEN next_at <= ? AND lease_until <= ? THEN next_at END) AS first,
               SUM(CASE WHEN lease_until > ? THEN 1 ELSE 0 END) AS busy
             FROM webhook_deliveries WHERE state = 'pending' GROUP BY endpoint_id) p
         ON p.endpoint_id = e.id
       WHERE e.enabled = 1 AND p.first IS NOT NULL AND p.busy < ?
       ORDER BY p.first, e.id LIMIT ?${skipLocked}`,
      [now, now, now, limit, max],
    );
    if (rows.length === 0) return [];
    const endpoints = new Map(rows.map((r) => [String(r.id), endpointOf(r)]));
    const ids = [...endpoints.keys()];
    const marks = ids.map(() => "?").join(", ");
    // Read again with the rows locked: another process's claim for these endpoints has committed or waits for us.
    const pending = await tx.all(
      `SELECT id, endpoint_id, next_at, lease_until FROM webhook_deliveries
       WHERE state = 'pending' AND endpoint_id IN (${marks}) ORDER BY seq`,
      ids,
    );
    const room = new Map(ids.map((id) => [id, limit]));
    for (const d of pending)
      if (Number(d.lease_until) > now) room.set(String(d.endpoint_id), room.get(String(d.endpoint_id))! - 1);
    const chosen: string[] = [];
    for (const d of pending) {
      const endpointId = String(d.endpoint_id);
      const left = room.get(endpointId)!;
      if (chosen.length >= max || left <= 0 || Number(d.next_at) > now || Number(d.lease_until) > now) continue;
      room.set(endpointId, left - 1);
      chosen.push(String(d.id));
    }
    if (chosen.length === 0) return [];
    const lease = randomId(16);
    const taken = await tx.all(
      `UPDATE webhook_deliveries SET lease = ?, lease_until = ?, attempts = attempts + 1
       WHERE id IN (${chosen.map(() => "?").join(", ")}) AND ${DUE}
       RETURNING id, endpoint_id, event_id, attempts`,
      [lease, until, ...chosen, now, now],
    );
    const events = new Map<string, { event: StreamEvent; received: number }>();
    const claimed: Claimed[] = [];
    for (const r of taken) {
      const eventId = String(r.event_id);
      let e = events.get(eventId);
      if (!e) {
        const row = await first(tx, "SELECT id, type, data, received FROM webhook_events WHERE id = ?", [eventId]);
        e = {
          event: { id: String(row?.id), type: String(row?.type), data: String(row?.data) },
          received: Number(row?.received),
        };
        events.set(eventId, e);
      }
      const endpoint = endpoints.get(String(r.endpoint_id))!;
      claimed.push({ id: String(r.id), lease, attempts: Number(r.attempts), endpoint, ...e });
    }
    // Oldest first, as they were chosen (RETURNING keeps no order).
    const order = new Map(chosen.map((id, i) => [id, i]));
    return claimed.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  });
}

/** Gives back claimed deliveries that were not sent (a sender closing): due again at once, the attempt not counted. */
export async function releaseClaims(db: PortalDatabase, claimed: readonly Claimed[]): Promise<void> {
  if (claimed.length === 0) return;
  await db.batch(
    claimed.map((c) => ({
      sql: "UPDATE webhook_deliveries SET lease = '', lease_until = 0, attempts = attempts - 1 WHERE id = ? AND lease = ?",
      params: [c.id, c.lease],
    })),
  );
}

/** When the next delivery falls due (its time, or the end of a lease on it); null: none pending. */
export async function nextDelivery(db: PortalDatabase): Promise<number | null> {
  const row = await first(
    db,
    `SELECT MIN(CASE WHEN d.lease_until > d.next_at THEN d.lease_until ELSE d.next_at END) AS due
     FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
     WHERE d.state = 'pending' AND e.enabled = 1`,
  );
  return row?.due === null || row?.due === undefined ? null : Number(row.due);
}
