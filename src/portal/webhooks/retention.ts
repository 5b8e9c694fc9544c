// How long the webhooks' tables keep what they hold: the attempts' log, finished deliveries and the events read from
// the stream are deleted RETENTION_MS after the fact (a pending delivery, and its event, are kept), so that the tables
// stay bounded by a month of events and attempts.
import type { PortalDatabase } from "../../db/database.ts";

/** How long attempts, finished deliveries and events are kept, ms (a replay reaches back this far). */
export const RETENTION_MS = 30 * 86_400_000;

/** How often the portal deletes what is older than RETENTION_MS, ms. */
export const PRUNE_EVERY_MS = 3600_000;

/** Deletes the attempts, finished deliveries and unreferenced events older than RETENTION_MS at `now`. */
export async function pruneWebhooks(db: PortalDatabase, now: number): Promise<void> {
  const before = now - RETENTION_MS;
  // Three statements, each whole on its own (in this order, a crash between them leaves only what the next run deletes).
  await db.run("DELETE FROM webhook_attempts WHERE at < ?", [before]);
  await db.run(
    `DELETE FROM webhook_deliveries WHERE state <> 'pending' AND next_at < ?
     AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = webhook_deliveries.id)`,
    [before],
  );
  await db.run(
    `DELETE FROM webhook_events WHERE received < ?
     AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`,
    [before],
  );
}
