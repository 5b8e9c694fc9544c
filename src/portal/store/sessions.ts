// Signed-in sessions: the cookie holds a random ID, the database only its hash, with idle and absolute expiry.
import type { PortalDatabase } from "../../db/database.ts";
import { hashSecret, randomToken } from "../secrets.ts";

/** How long a session lasts without a request (30 min) and at most (12 h), ms: OWASP's session management advice. */
export const DEFAULT_SESSION_LIMITS = { idleMs: 30 * 60_000, absoluteMs: 12 * 3600_000 } as const;
export type SessionLimits = { idleMs: number; absoluteMs: number };
/** `seen` is written at most this often, ms, so that a page view is not always a write. */
const SEEN_RESOLUTION_MS = 60_000;

/** Starts a session for `accountId` acting for organisation `orgId` (null: none); returns the ID for the cookie. */
export async function createSession(
  db: PortalDatabase,
  accountId: string,
  now: number,
  orgId: string | null,
): Promise<string> {
  const id = randomToken();
  await db.run("INSERT INTO sessions (id_hash, account_id, created, seen, org_id) VALUES (?, ?, ?, ?, ?)", [
    hashSecret(id),
    accountId,
    now,
    now,
    orgId,
  ]);
  return id;
}

/** Makes session `id` act for organisation `orgId` (one its account is a member of: the caller checks). */
export async function switchSession(db: PortalDatabase, id: string, orgId: string): Promise<void> {
  await db.run("UPDATE sessions SET org_id = ? WHERE id_hash = ?", [orgId, hashSecret(id)]);
}

/**
 * The account ID and organisation of a live session, refreshing its idle time; null (and the session ended) once it
 * has expired.
 */
export async function resumeSession(
  db: PortalDatabase,
  id: string,
  now: number,
  limits: SessionLimits,
): Promise<{ accountId: string; orgId: string | null } | null> {
  const hash = hashSecret(id);
  const row = (await db.all("SELECT account_id, org_id, created, seen FROM sessions WHERE id_hash = ?", [hash]))[0];
  if (!row) return null;
  if (now - Number(row.seen) >= limits.idleMs || now - Number(row.created) >= limits.absoluteMs) {
    await db.run("DELETE FROM sessions WHERE id_hash = ?", [hash]);
    return null;
  }
  if (now - Number(row.seen) >= SEEN_RESOLUTION_MS)
    await db.run("UPDATE sessions SET seen = ? WHERE id_hash = ?", [now, hash]);
  return { accountId: String(row.account_id), orgId: row.org_id === null ? null : String(row.org_id) };
}

/** Ends one session. */
export async function endSession(db: PortalDatabase, id: string): Promise<void> {
  await db.run("DELETE FROM sessions WHERE id_hash = ?", [hashSecret(id)]);
}

/** Ends every session of an account (sign-out everywhere, a new password). */
export async function endAllSessions(db: PortalDatabase, accountId: string): Promise<void> {
  await db.run("DELETE FROM sessions WHERE account_id = ?", [accountId]);
}

/** Ends every session of an account but `keepId`'s (an email change: the browser that made it stays signed in). */
export async function endOtherSessions(db: PortalDatabase, accountId: string, keepId: string | null): Promise<void> {
  if (keepId === null) return endAllSessions(db, accountId);
  await db.run("DELETE FROM sessions WHERE account_id = ? AND id_hash <> ?", [accountId, hashSecret(keepId)]);
}
