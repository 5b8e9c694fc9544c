// Sign-in attempts limited per client address and per account: past a number of failures in a window, a lock.
import type { PortalDatabase } from "../db/database.ts";

/** Failures allowed in a window before the lock, and how long window and lock last, ms. */
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

/** Seconds until every lock on `keys` has ended (0: none is locked). */
export async function lockedFor(db: PortalDatabase, keys: string[], now: number): Promise<number> {
  const rows = await db.all(
    `SELECT locked_until FROM signin_throttle WHERE key IN (${keys.map(() => "?").join(", ")}) AND locked_until > ?`,
    [...keys, now],
  );
  const until = Math.max(0, ...rows.map((r) => Number(r.locked_until)));
  return until > now ? Math.ceil((until - now) / 1000) : 0;
}

/** Counts a failure against `key`; locks it when the rule's count is reached within its window. */
export async function recordFailure(db: PortalDatabase, key: string, rule: ThrottleRule, now: number): Promise<void> {
  const rows = await db.all(
    `INSERT INTO signin_throttle (key, failures, window_start, locked_until) VALUES (?, 1, ?, 0)
     ON CONFLICT (key) DO UPDATE SET
       failures = CASE WHEN signin_throttle.window_start <= ? THEN 1 ELSE signin_throttle.failures + 1 END,
       window_start = CASE WHEN signin_throttle.window_start <= ? THEN ? ELSE signin_throttle.window_start END
     RETURNING failures`,
    [key, now, now - rule.windowMs, now - rule.windowMs, now],
  );
  if (Number(rows[0]?.failures) >= rule.failures)
    await db.run("UPDATE signin_throttle SET locked_until = ?, failures = 0, window_start = ? WHERE key = ?", [
      now + rule.lockMs,
      now,
      key,
    ]);
}

/** Forgets the failures counted against `key` (a successful sign-in, a password reset). */
export async function clearFailures(db: PortalDatabase, key: string): Promise<void> {
  await db.run("DELETE FROM signin_throttle WHERE key = ?", [key]);
}
