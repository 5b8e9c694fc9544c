// Limits on attempts (sign-ins per account and per address, mails per recipient and per address): each attempt is
// taken from its limit atomically, by one statement, before the work it guards. Requests that arrive together cannot
// all pass a check that none of them has recorded yet: the database serialises the statements on the row.
import type { PortalDatabase } from "../../db/database.ts";

/** Attempts allowed in a window before the lock, and how long window and lock last, ms. */
export interface ThrottleRule {
  failures: number;
  windowMs: number;
  lockMs: number;
}

/**
 * Defaults: an account is locked for 15 min after 10 failed sign-ins within 15 min (so that a password cannot be
 * guessed at more than 10 tries a quarter hour, whatever addresses the guesses come from); an address after 50.
 */
export const DEFAULT_THROTTLE = {
  account: { failures: 10, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
  address: { failures: 50, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
} as const satisfies Record<string, ThrottleRule>;

/**
 * Takes one attempt from `key`'s limit. Returns 0 when it was taken (the work may go on), else the seconds until the
 * key's lock ends (the work must not be done). One statement reads and writes the row:
 *
 * - a key under a lock is refused and left as it is;
 * - a key whose window has ended starts a new one with this attempt;
 * - an attempt past the rule's count within the window is refused and locks the key for `lockMs`; the count starts
 *   again when the lock ends (the window is moved to the lock's end).
 *
 * Every SET expression reads the row as it was before the statement (SQLite and PostgreSQL alike).
 */
export async function takeAttempt(db: PortalDatabase, key: string, rule: ThrottleRule, now: number): Promise<number> {
  const windowEnded = now - rule.windowMs;
  const lockEnd = now + rule.lockMs;
  const rows = await db.all(
    `INSERT INTO signin_throttle (key, failures, window_start, locked_until) VALUES (?, 1, ?, 0)
     ON CONFLICT (key) DO UPDATE SET
       failures = CASE
         WHEN signin_throttle.locked_until > ? THEN signin_throttle.failures
         WHEN signin_throttle.window_start <= ? THEN 1
         WHEN signin_throttle.failures + 1 > ? THEN 0
         ELSE signin_throttle.failures + 1 END,
       window_start = CASE
         WHEN signin_throttle.locked_until > ? THEN signin_throttle.window_start
         WHEN signin_throttle.window_start <= ? THEN ?
         WHEN signin_throttle.failures + 1 > ? THEN ?
         ELSE signin_throttle.window_start END,
       locked_until = CASE
         WHEN signin_throttle.locked_until > ? THEN signin_throttle.locked_until
         WHEN signin_throttle.window_start <= ? THEN 0
         WHEN signin_throttle.failures + 1 > ? THEN ?
         ELSE signin_throttle.locked_until END
     RETURNING locked_until`,
    [
      key,
      now,
      ...[now, windowEnded, rule.failures],
      ...[now, windowEnded, now, rule.failures, lockEnd],
      ...[now, windowEnded, rule.failures, lockEnd],
    ],
  );
  const until = Number(rows[0]?.locked_until ?? 0);
  return until > now ? Math.ceil((until - now) / 1000) : 0;
}

/**
 * Takes one attempt from each of `limits` in turn, and stops at the first that refuses. Returns 0 when every one was
 * taken, else the refusal's seconds to wait. (Attempts taken before a refusal stay taken: a request refused on one
 * limit was still a request.)
 */
export async function takeAttempts(
  db: PortalDatabase,
  limits: readonly (readonly [key: string, rule: ThrottleRule])[],
  now: number,
): Promise<number> {
  for (const [key, rule] of limits) {
    const wait = await takeAttempt(db, key, rule, now);
    if (wait > 0) return wait;
  }
  return 0;
}

/** Gives back one attempt taken from `key` (the attempt succeeded, and successes are not to count against it). */
export async function returnAttempt(db: PortalDatabase, key: string): Promise<void> {
  await db.run("UPDATE signin_throttle SET failures = failures - 1 WHERE key = ? AND failures > 0", [key]);
}

/** Seconds until every lock on `keys` has ended (0: none is locked). Reads only: for pages, never as a guard. */
export async function lockedFor(db: PortalDatabase, keys: string[], now: number): Promise<number> {
  const rows = await db.all(
    `SELECT locked_until FROM signin_throttle WHERE key IN (${keys.map(() => "?").join(", ")}) AND locked_until > ?`,
    [...keys, now],
  );
  const until = Math.max(0, ...rows.map((r) => Number(r.locked_until)));
  return until > now ? Math.ceil((until - now) / 1000) : 0;
}

/** Forgets the attempts counted against `key` (a successful sign-in, a password reset). */
export async function clearFailures(db: PortalDatabase, key: string): Promise<void> {
  await db.run("DELETE FROM signin_throttle WHERE key = ?", [key]);
}
