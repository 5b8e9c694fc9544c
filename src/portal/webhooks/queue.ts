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

/** Queues one delivery of `eventId` to `endpointId` (none if it has one already); returns whether it was queued. */
async function queueDelivery(tx: Queries, endpointId: string, eventId: string, seq: number, now: number) {
  return tx.run(
    `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, seq, state, attempts, next_at, lease, lease_until, created)
     VALUES (?, ?, ?, ?, 'pending', 0, ?, '', 0, ?) ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
    [randomId(20), endpointId, eventId, seq, now, now],
  );
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
      for (const endpoint of endpoints)
        if (wants(endpoint, e.type, store)) queued += await queueDelivery(tx, endpoint.id, e.id, now * 1000 + i, now);
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
    await queueDelivery(tx, endpointId, event.id, now * 1000, now);
  });
}

const DUE = "state = 'pending' AND next_at <= ? AND lease_until <= ?";

/** An enabled endpoint with a due delivery and room under `limit`, not in `skip`, locked (PostgreSQL) for this claim. */
async function lockEndpoint(tx: Queries, dialect: string, now: number, limit: number, skip: readonly string[]) {
  const skipLocked = dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
  const notIn = skip.length ? ` AND e.id NOT IN (${skip.map(() => "?").join(", ")})` : "";
  return first(
    tx,
    `SELECT e.* FROM webhook_endpoints e WHERE e.enabled = 1${notIn}
       AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.${DUE.replaceAll(" AND ", " AND d.")})
       AND (SELECT COUNT(*) FROM webhook_deliveries f WHERE f.endpoint_id = e.id AND f.state = 'pending'
            AND f.lease_until > ?) < ?
     ORDER BY (SELECT MIN(d.next_at) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending')
     LIMIT 1${skipLocked}`,
    [...skip, now, now, now, limit],
  );
}

/**
 * Claims up to `limit` less those in flight of one endpoint's due deliveries, oldest first, until `until`; `skip`:
 * endpoints not to look at (found full). Null when no endpoint has any due; `claimed` empty when the one found is full.
 */
export async function claimDeliveries(
  db: PortalDatabase,
  now: number,
  until: number,
  limit: number,
  skip: readonly string[],
): Promise<{ endpointId: string; claimed: Claimed[] } | null> {
  return db.transaction(async (tx) => {
    const row = await lockEndpoint(tx, db.dialect, now, limit, skip);
    if (!row) return null;
    const endpoint = endpointOf(row);
    // Counted again with the row locked: another process's claim for this endpoint has committed or waits for us.
    const busy = await first(
      tx,
      "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending' AND lease_until > ?",
      [endpoint.id, now],
    );
    const room = limit - Number(busy?.n ?? 0);
    if (room <= 0) return { endpointId: endpoint.id, claimed: [] };
    const lease = randomId(16);
    const rows = await tx.all(
      `UPDATE webhook_deliveries SET lease = ?, lease_until = ?, attempts = attempts + 1
       WHERE id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = ? AND ${DUE} ORDER BY seq LIMIT ?)
         AND ${DUE}
       RETURNING id, event_id, attempts`,
      [lease, until, endpoint.id, now, now, room, now, now],
    );
    const claimed: Claimed[] = [];
    for (const r of rows) {
      const e = await first(tx, "SELECT id, type, data, received FROM webhook_events WHERE id = ?", [
        r.event_id ?? null,
      ]);
      const event = { id: String(e?.id), type: String(e?.type), data: String(e?.data) };
      const received = Number(e?.received);
      claimed.push({ id: String(r.id), lease, attempts: Number(r.attempts), endpoint, event, received });
    }
    return { endpointId: endpoint.id, claimed };
  });
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
