// Signed-in sessions: the cookie holds a random ID, the database only its hash, with idle and absolute expiry.
import type { PortalDatabase } from "../../db/database.ts";
import { hashSecret, randomToken } from "../secrets.ts";

/** How long a session lasts without a request (30 min) and at most (12 h), ms: OWASP's session management advice. */
export const DEFAULT_SESSION_LIMITS = { idleMs: 30 * 60_000, absoluteMs: 12 * 3600_000 } as const;
export type SessionLimits = { idleMs: number; absoluteMs: number };
/** `seen` is written at most this often, ms, so that a page view is not always a write. */
const SEEN_RESOLUTION_MS = 60_000;

/** Starts a session for `accountId`; returns the ID for the cookie (never stored). */
export async function createSession(db: PortalDatabase, accountId: string, now: number): Promise<string> {
  const id = randomToken();
  await db.run("INSERT INTO sessions (id_hash, account_id, created, seen) VALUES (?, ?, ?, ?)", [
    hashSecret(id),
    accountId,
    now,
    now,
  ]);
  return id;
}

/** The account ID of a live session, refreshing its idle time; null (and the session ended) once it has expired. */
export async function resumeSession(
  db: PortalDatabase,
  id: string,
  now: number,
  limits: SessionLimits,
): Promise<string | null> {
  const hash = hashSecret(id);
  const row = (await db.all("SELECT account_id, created, seen FROM sessions WHERE id_hash = ?", [hash]))[0];
  if (!row) return null;
  if (now - Number(row.seen) >= limits.idleMs || now - Number(row.created) >= limits.absoluteMs) {
    await db.run("DELETE FROM sessions WHERE id_hash = ?", [hash]);
    return null;
  }
  if (now - Number(row.seen) >= SEEN_RESOLUTION_MS)
    await db.run("UPDATE sessions SET seen = ? WHERE id_hash = ?", [now, hash]);
  return String(row.account_id);
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
