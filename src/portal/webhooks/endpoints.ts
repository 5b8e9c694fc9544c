// An organisation's webhook endpoints in the database: where to send, which events (types, stores, affid), the
// signing secrets (sealed: signing.ts) and whether the endpoint is enabled.
import type { PortalDatabase, Queries, Row } from "../../db/database.ts";
import { first } from "../../db/database.ts";
import { randomId } from "../secrets.ts";

/** The event types an endpoint may ask for: the stream's (docs/events.md). */
export const EVENT_TYPES = ["sale.announced", "sale.begins", "sale.ends", "sale.updated"] as const;

/** An endpoint as stored (its secrets still sealed). */
export interface Endpoint {
  id: string;
  orgId: string;
  url: string;
  /** The event types sent; empty: all. */
  types: string[];
  /** The stores whose events are sent; empty: all. */
  stores: string[];
  /** Spliced into the sale's page link as the API does (`""`: none). */
  affid: string;
  secret: string;
  previous: string | null;
  /** Until when the previous secret signs too, ms. */
  previousUntil: number;
  enabled: boolean;
  disabledReason: string;
  failingSince: number | null;
  created: number;
  createdBy: string;
}

const words = (v: unknown) => String(v).split(" ").filter(Boolean);

/** An endpoint from its row. */
export const endpointOf = (r: Row): Endpoint => ({
  id: String(r.id),
  orgId: String(r.org_id),
  url: String(r.url),
  types: words(r.types),
  stores: words(r.stores),
  affid: String(r.affid),
  secret: String(r.secret),
  previous: r.previous === null ? null : String(r.previous),
  previousUntil: Number(r.previous_until),
  enabled: Number(r.enabled) === 1,
  disabledReason: String(r.disabled_reason),
  failingSince: r.failing_since === null ? null : Number(r.failing_since),
  created: Number(r.created),
  createdBy: String(r.created_by),
});

/** Whether the endpoint asks for an event of this type and store. */
export const wants = (e: Pick<Endpoint, "types" | "stores">, type: string, store: string) =>
  (e.types.length === 0 || e.types.includes(type)) && (e.stores.length === 0 || e.stores.includes(store));

/** A new endpoint's ID (its secret is sealed for it, so it is made first). */
export const newEndpointId = () => randomId(16);

/** Adds an endpoint, enabled. */
export async function insertEndpoint(
  db: Queries,
  e: Pick<Endpoint, "id" | "orgId" | "url" | "types" | "stores" | "affid" | "secret" | "created" | "createdBy">,
): Promise<void> {
  await db.run(
    `INSERT INTO webhook_endpoints (id, org_id, url, types, stores, affid, secret, previous, previous_until, enabled,
       disabled_reason, failing_since, created, created_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 0, 1, '', NULL, ?, ?)`,
    [e.id, e.orgId, e.url, e.types.join(" "), e.stores.join(" "), e.affid, e.secret, e.created, e.createdBy],
  );
}

/** The organisation's endpoints, oldest first. */
export async function listEndpoints(db: PortalDatabase, orgId: string): Promise<Endpoint[]> {
  const rows = await db.all("SELECT * FROM webhook_endpoints WHERE org_id = ? ORDER BY created, id", [orgId]);
  return rows.map(endpointOf);
}

/** The organisation's endpoint `id`, or null. */
export async function findEndpoint(db: Queries, orgId: string, id: string): Promise<Endpoint | null> {
  const row = await first(db, "SELECT * FROM webhook_endpoints WHERE id = ? AND org_id = ?", [id, orgId]);
  return row ? endpointOf(row) : null;
}

/** Every enabled endpoint (the stream's reader picks those that want each event). */
export async function enabledEndpoints(db: Queries): Promise<Endpoint[]> {
  return (await db.all("SELECT * FROM webhook_endpoints WHERE enabled = 1")).map(endpointOf);
}

/** A new secret (sealed), the current one kept as the previous until `until`. */
export async function rotateEndpointSecret(db: Queries, e: Endpoint, sealed: string, until: number): Promise<boolean> {
  const changed = await db.run(
    "UPDATE webhook_endpoints SET secret = ?, previous = ?, previous_until = ? WHERE id = ? AND secret = ?",
    [sealed, until > 0 ? e.secret : null, until, e.id, e.secret],
  );
  return changed === 1;
}

/** Enables (failures forgotten) or disables the endpoint, with the reason shown on its page. */
export async function setEndpointEnabled(db: Queries, id: string, enabled: boolean, reason: string): Promise<number> {
  return db.run(
    `UPDATE webhook_endpoints SET enabled = ?, disabled_reason = ?, failing_since = NULL WHERE id = ? AND enabled = ?`,
    [enabled ? 1 : 0, enabled ? "" : reason, id, enabled ? 0 : 1],
  );
}

/** Deletes the endpoint, its deliveries and their attempts. */
export async function deleteEndpoint(db: PortalDatabase, id: string): Promise<void> {
  await db.batch([
    { sql: "DELETE FROM webhook_attempts WHERE endpoint_id = ?", params: [id] },
    { sql: "DELETE FROM webhook_deliveries WHERE endpoint_id = ?", params: [id] },
    { sql: "DELETE FROM webhook_endpoints WHERE id = ?", params: [id] },
  ]);
}
