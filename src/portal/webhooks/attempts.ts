// What an attempt leaves in the database: its line in the attempts' log, and the delivery's next state (delivered,
// due again at its next retry, or failed); the endpoint's failing streak; and the log as the portal's pages read it.
import type { PortalDatabase } from "../../db/database.ts";
import { randomId } from "../secrets.ts";
import { wants } from "./endpoints.ts";
import type { AttemptResult } from "./send.ts";
import type { Claimed } from "./queue.ts";

/** An attempt sent, to be recorded: delivered (`retryAt` ignored), due again at `retryAt`, or failed (null). */
export interface FinishedAttempt {
  c: Claimed;
  result: AttemptResult;
  ok: boolean;
  retryAt: number | null;
  /** When it ended, ms. */
  now: number;
}

/** Attempts a statement writes (the log's INSERT: 8 parameters each; the deliveries' UPDATE: 7 each). */
const STATEMENT_ROWS = 200;

/** `items` in runs of at most STATEMENT_ROWS, a new run where `key` (if given) would repeat in one. */
function runs<T>(items: readonly T[], key: (item: T) => unknown = (item) => item): T[][] {
  const out: T[][] = [];
  let run: T[] = [];
  let keys = new Set<unknown>();
  for (const item of items) {
    if (run.length >= STATEMENT_ROWS || keys.has(key(item))) {
      out.push(run);
      [run, keys] = [[], new Set()];
    }
    run.push(item);
    keys.add(key(item));
  }
  if (run.length > 0) out.push(run);
  return out;
}

/**
 * Records attempts and their outcomes, in one transaction (the sender writes together those that ended meanwhile:
 * one commit, not one each), a few statements for them all: the log's lines in one INSERT, the deliveries' states in
 * one UPDATE (keyed by the delivery's ID: a delivery changes only while its claim's lease is still its own), the
 * endpoints that only succeeded in one UPDATE; an endpoint with a failure among them has its attempts applied one by
 * one, in order, as before. Returns, for each, when its endpoint's failing streak began (null: it is not failing).
 */
export async function finishAttempts(db: PortalDatabase, attempts: readonly FinishedAttempt[]) {
  return db.transaction(async (tx) => {
    for (const run of runs(attempts)) {
      await tx.run(
        `INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, attempt, at, status, latency_ms, answer)
         VALUES ${run.map(() => "(?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
        run.flatMap(({ c, result, now }) => [
          randomId(20),
          c.id,
          c.endpoint.id,
          c.attempts,
          now,
          result.status,
          result.latencyMs,
          result.answer,
        ]),
      );
    }
    for (const run of runs(attempts, (a) => a.c.id)) {
      const whens = (then: string) => run.map(() => `WHEN ? THEN ${then}`).join(" ");
      const next = run.map(({ ok, retryAt, now }) =>
        ok ? ["delivered", now] : retryAt === null ? ["failed", now] : ["pending", retryAt],
      );
      await tx.run(
        `UPDATE webhook_deliveries SET state = CASE id ${whens("?")} END,
           next_at = CASE id ${whens("CAST(? AS BIGINT)")} END, lease = '', lease_until = 0
         WHERE id IN (${run.map(() => "?").join(", ")}) AND lease = CASE id ${whens("?")} END`,
        [
          ...run.flatMap(({ c }, i) => [c.id, next[i]![0]!]),
          ...run.flatMap(({ c }, i) => [c.id, next[i]![1]!]),
          ...run.map(({ c }) => c.id),
          ...run.flatMap(({ c }) => [c.id, c.lease]),
        ],
      );
    }
    const failing = new Set(attempts.filter((a) => !a.ok).map((a) => a.c.endpoint.id));
    const succeeded = [...new Set(attempts.map((a) => a.c.endpoint.id))].filter((id) => !failing.has(id));
    for (const run of runs(succeeded))
      await tx.run(
        `UPDATE webhook_endpoints SET failing_since = NULL
         WHERE id IN (${run.map(() => "?").join(", ")}) AND failing_since IS NOT NULL`,
        run,
      );
    const since: (number | null)[] = [];
    for (const { c, ok, now } of attempts) {
      if (!failing.has(c.endpoint.id)) {
        since.push(null);
        continue;
      }
      if (ok) {
        await tx.run("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ?", [c.endpoint.id]);
        since.push(null);
        continue;
      }
      const rows = await tx.all(
        "UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ?) WHERE id = ? RETURNING failing_since",
        [now, c.endpoint.id],
      );
      since.push(rows[0] ? Number(rows[0].failing_since) : null);
    }
    return since;
  });
}

/** A delivery as the log shows it. */
export interface DeliveryLine {
  id: string;
  eventId: string;
  type: string;
  state: string;
  attempts: number;
  nextAt: number;
  created: number;
}

/** An attempt as the log shows it. */
export interface AttemptLine {
  at: number;
  eventId: string;
  type: string;
  status: number;
  latencyMs: number;
  answer: string;
}

/** The endpoint's latest deliveries and attempts (at most `limit` of each), newest first. */
export async function readLog(db: PortalDatabase, endpointId: string, limit = 50) {
  const deliveries = await db.all(
    `SELECT d.id, d.event_id, e.type, d.state, d.attempts, d.next_at, d.created FROM webhook_deliveries d
     JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = ? ORDER BY d.created DESC, d.seq DESC LIMIT ?`,
    [endpointId, limit],
  );
  const attempts = await db.all(
    `SELECT a.at, d.event_id, e.type, a.status, a.latency_ms, a.answer FROM webhook_attempts a
     JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN webhook_events e ON e.id = d.event_id
     WHERE a.endpoint_id = ? ORDER BY a.at DESC, a.attempt DESC, a.id LIMIT ?`,
    [endpointId, limit],
  );
  return {
    deliveries: deliveries.map((r): DeliveryLine => ({
      id: String(r.id),
      eventId: String(r.event_id),
      type: String(r.type),
      state: String(r.state),
      attempts: Number(r.attempts),
      nextAt: Number(r.next_at),
      created: Number(r.created),
    })),
    attempts: attempts.map((r): AttemptLine => ({
      at: Number(r.at),
      eventId: String(r.event_id),
      type: String(r.type),
      status: Number(r.status),
      latencyMs: Number(r.latency_ms),
      answer: String(r.answer),
    })),
  };
}

/** Makes a delivery of the endpoint due now (pending or failed, not one being sent); returns whether it did. */
export async function retryNow(db: PortalDatabase, endpointId: string, deliveryId: string, now: number) {
  const changed = await db.run(
    `UPDATE webhook_deliveries SET state = 'pending', next_at = ? WHERE id = ? AND endpoint_id = ?
       AND state <> 'delivered' AND lease_until <= ?`,
    [now, deliveryId, endpointId, now],
  );
  return changed === 1;
}

/** The most events one replay sends. */
const REPLAY_MAX = 10_000;

/**
 * Sends the endpoint again every event of its types and stores whose instant is in [from, to] (at most REPLAY_MAX),
 * each as one delivery due now (with the event's ID: a receiver that keeps IDs sees a repeat). Returns the count.
 */
export async function replayEvents(
  db: PortalDatabase,
  endpoint: { id: string; types: string[]; stores: string[] },
  from: number,
  to: number,
  now: number,
): Promise<number> {
  const events = await db.all(
    `SELECT id, type, store FROM webhook_events WHERE at >= ? AND at <= ? AND type LIKE 'sale.%' ORDER BY at, id LIMIT ?`,
    [from, to, REPLAY_MAX],
  );
  const wanted = events.filter((e) => wants(endpoint, String(e.type), String(e.store)));
  await db.transaction(async (tx) => {
    for (const [i, e] of wanted.entries())
      await tx.run(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, seq, state, attempts, next_at, lease, lease_until, created)
         VALUES (?, ?, ?, ?, 'pending', 0, ?, '', 0, ?) ON CONFLICT (endpoint_id, event_id)
         DO UPDATE SET state = 'pending', attempts = 0, next_at = excluded.next_at, seq = excluded.seq,
           created = excluded.created`,
        [randomId(20), endpoint.id, String(e.id), now * 1000 + i, now, now],
      );
  });
  return wanted.length;
}
