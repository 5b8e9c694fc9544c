// Devices an account has signed in from (OWASP's device cookies): the cookie holds a random token, the database only
// its hash, the account and when it expires. A sign-in presenting one is limited per device, not by the account's lock.
import type { PortalDatabase } from "../../db/database.ts";
import { first } from "../../db/database.ts";
import { hashSecret, randomToken } from "../secrets.ts";

/** Devices kept an account: a new one beyond them forgets the oldest, so that the table stays bounded. */
const MAX_DEVICES_PER_ACCOUNT = 20;

/** Records a new device of `accountId` valid until `expires`; returns the token for the cookie (never stored). */
export async function addDevice(db: PortalDatabase, accountId: string, now: number, expires: number): Promise<string> {
  const token = randomToken();
  await db.batch([
    {
      sql: "INSERT INTO signin_devices (token_hash, account_id, created, expires) VALUES (?, ?, ?, ?)",
      params: [hashSecret(token), accountId, now, expires],
    },
    {
      sql: `DELETE FROM signin_devices WHERE account_id = ? AND (expires <= ? OR token_hash NOT IN (
              SELECT token_hash FROM signin_devices WHERE account_id = ? ORDER BY created DESC, token_hash LIMIT ?))`,
      params: [accountId, now, accountId, MAX_DEVICES_PER_ACCOUNT],
    },
  ]);
  return token;
}

/**
 * The hash of `token` when it names an unexpired device of `accountId` (the key its sign-ins are limited by), else
 * null: a token of another account, expired, forgotten or made up.
 */
export async function deviceOf(
  db: PortalDatabase,
  token: string,
  accountId: string,
  now: number,
): Promise<string | null> {
  const hash = hashSecret(token);
  const row = await first(
    db,
    "SELECT token_hash FROM signin_devices WHERE token_hash = ? AND account_id = ? AND expires > ?",
    [hash, accountId, now],
  );
  return row ? hash : null;
}
