// Passkeys' rows: each account's WebAuthn credentials (public key, signature counter, name, last use), and the
// challenges of their ceremonies. A challenge is used by one statement that deletes it, so that only one request can
// use it (two at once: one wins), and a counter moves only forward by one statement, so that two assertions of one
// counter value at once cannot both pass.
import { first } from "../../db/database.ts";
import type { PortalDatabase, Queries } from "../../db/database.ts";
import { hashSecret } from "../secrets.ts";

/** One of an account's passkeys. */
export interface Passkey {
  /** The credential ID, base64url. */
  id: string;
  accountId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  created: number;
  lastUsed: number | null;
}

/** What a challenge is for: adding a passkey, signing in with one alone, or as the second step after the password. */
export type ChallengePurpose = "register" | "first" | "second";

/** How long a challenge can be used, ms (the ceremony's own timeout is shorter). */
const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;

const toPasskey = (row: Record<string, unknown>): Passkey => ({
  id: String(row.credential_id),
  accountId: String(row.account_id),
  publicKey: String(row.public_key),
  counter: Number(row.counter),
  transports: String(row.transports).split(",").filter(Boolean),
  name: String(row.name),
  created: Number(row.created),
  lastUsed: row.last_used === null ? null : Number(row.last_used),
});

/** The account's passkeys, oldest first. */
export async function listPasskeys(db: PortalDatabase, accountId: string): Promise<Passkey[]> {
  const rows = await db.all("SELECT * FROM passkeys WHERE account_id = ? ORDER BY created, credential_id", [accountId]);
  return rows.map(toPasskey);
}

/** The passkey of credential ID `id`, whoever's it is. */
export async function findPasskey(db: PortalDatabase, id: string): Promise<Passkey | null> {
  const row = await first(db, "SELECT * FROM passkeys WHERE credential_id = ?", [id]);
  return row ? toPasskey(row) : null;
}

/** Adds a passkey; false when its credential ID is known already (added before, to this account or another). */
export async function addPasskey(db: Queries, key: Omit<Passkey, "lastUsed">): Promise<boolean> {
  const changed = await db.run(
    `INSERT INTO passkeys (credential_id, account_id, public_key, counter, transports, name, created, last_used)
     VALUES (?, ?, ?, ?, ?, ?, ?, NULL) ON CONFLICT (credential_id) DO NOTHING`,
    [key.id, key.accountId, key.publicKey, key.counter, key.transports.join(","), key.name, key.created],
  );
  return changed === 1;
}

/** Renames the account's passkey `id`; false when it has none of that ID. */
export async function renamePasskey(db: PortalDatabase, accountId: string, id: string, name: string) {
  return (
    (await db.run("UPDATE passkeys SET name = ? WHERE credential_id = ? AND account_id = ?", [name, id, accountId])) ===
    1
  );
}

/** Removes the account's passkey `id`: true for the one request that does. */
export async function removePasskey(db: Queries, accountId: string, id: string): Promise<boolean> {
  return (await db.run("DELETE FROM passkeys WHERE credential_id = ? AND account_id = ?", [id, accountId])) === 1;
}

/**
 * Records a use of passkey `id` whose assertion carried `counter`: true for the one request that does; false when a
 * counter as high was accepted already (a cloned authenticator, or the same counter sent twice at once). An
 * authenticator that keeps no counter sends 0 every time, which stays accepted while the stored one is 0.
 */
export async function usePasskey(db: PortalDatabase, id: string, counter: number, now: number): Promise<boolean> {
  const changed = await db.run(
    "UPDATE passkeys SET counter = ?, last_used = ? WHERE credential_id = ? AND (counter < ? OR (counter = 0 AND ? = 0))",
    [counter, now, id, counter, counter],
  );
  return changed === 1;
}

/**
 * Keeps a new challenge for `purpose` (of `accountId`, or null: not known yet), usable only with the form token
 * `csrf` of the browser it is handed to; expired ones are dropped first.
 */
export async function keepChallenge(
  db: PortalDatabase,
  challenge: string,
  c: { purpose: ChallengePurpose; accountId: string | null; csrf: string },
  now: number,
): Promise<void> {
  await db.run("DELETE FROM passkey_challenges WHERE created <= ?", [now - PASSKEY_CHALLENGE_TTL_MS]);
  await db.run(
    "INSERT INTO passkey_challenges (id_hash, purpose, account_id, holder, created) VALUES (?, ?, ?, ?, ?)",
    [hashSecret(challenge), c.purpose, c.accountId, hashSecret(c.csrf), now],
  );
}

/**
 * Uses `challenge`, kept for this browser (`csrf`) and not expired: its purpose and account for the one request that
 * does, null for every other (unknown, expired, another browser's, or used: a replay, or the same sent twice at once).
 */
export async function useChallenge(
  db: PortalDatabase,
  challenge: string,
  csrf: string,
  now: number,
): Promise<{ purpose: ChallengePurpose; accountId: string | null } | null> {
  const rows = await db.all(
    "DELETE FROM passkey_challenges WHERE id_hash = ? AND holder = ? AND created > ? RETURNING purpose, account_id",
    [hashSecret(challenge), hashSecret(csrf), now - PASSKEY_CHALLENGE_TTL_MS],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    purpose: String(row.purpose) as ChallengePurpose,
    accountId: row.account_id === null ? null : String(row.account_id),
  };
}
