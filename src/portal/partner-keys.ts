// A partner's API keys: written to the keys file the API servers read (under its writers' lock, beside `npm run
// keys`), named `p.<account>.<key>` there; the portal's database keeps each key's label and its first and last 4
// characters, the keys file its hash, dates and limits.
import {
  applyLimits,
  KeyInputError,
  generateKey,
  graceUntil,
  hashKey,
  loadKeysFile,
  revokeKey,
  rotateKey,
  updateKeysFile,
} from "../keys/keys-file.ts";
import type { KeyRecord } from "../keys/keys-file.ts";
import type { PortalDatabase, Row } from "../db/database.ts";
import { randomId } from "./secrets.ts";
import { takeAttempt } from "./store/throttle.ts";
import type { ThrottleRule } from "./store/throttle.ts";

/** Key creations and rotations an account may make an hour, at least (twice its key limit when that is more). */
const MIN_KEY_CHANGES = 20;

/**
 * Takes one key creation or rotation from the account's limit (MIN_KEY_CHANGES an hour, or twice `keyLimit`; then
 * refused for an hour), atomically and before the change: 0 when taken, else the seconds to wait. Each change makes
 * every API server reload its keys, so none may be made without bound.
 */
export function takeKeyChange(db: PortalDatabase, accountId: string, keyLimit: number, now: number): Promise<number> {
  const rule: ThrottleRule = {
    failures: Math.max(MIN_KEY_CHANGES, 2 * keyLimit),
    windowMs: 3600_000,
    lockMs: 3600_000,
  };
  return takeAttempt(db, `key-changes:${accountId}`, rule, now);
}

/** The name in the keys file of an account's key: the account is read back from it. */
const keyFileName = (accountId: string, keyId: string) => `p.${accountId}.${keyId}`;

/** A key as the dashboard shows it. */
export interface PartnerKey {
  id: string;
  /** Its name in the keys file, under which its usage is counted (src/usage/). */
  name: string;
  label: string;
  first4: string;
  last4: string;
  created: number;
  /**
   * `suspended`: the account is suspended by an operator (the API refuses the key until it is reinstated). A key no
   * longer in the keys file is `revoked`: the file forgets revoked keys after a while (KEEP_REVOKED_MS).
   */
  status: "active" | "suspended" | "revoked";
  rotated?: string;
  revoked?: string;
  /** The end of the grace period of the key it replaced, while one runs. */
  graceUntil?: string;
  /** The key's own limits, when it has some (else the API's defaults apply). */
  rate?: number;
  burst?: number;
  /** The email of the member who made it (when the portal still knows them). */
  createdBy?: string;
}

/** The account already has as many live keys as it may. */
export class KeyLimitError extends Error {
  constructor(limit: number) {
    super(`you have ${limit} keys, the most an account may have: revoke one first`);
    this.name = "KeyLimitError";
  }
}

/** The account's keys, newest first, with their state from the keys file. */
export async function listPartnerKeys(
  db: PortalDatabase,
  keysFile: string,
  accountId: string,
  now: number,
): Promise<PartnerKey[]> {
  const rows = await db.all(
    `SELECT api_keys.*, accounts.email AS creator FROM api_keys LEFT JOIN accounts ON accounts.id = api_keys.created_by
     WHERE api_keys.account_id = ? ORDER BY api_keys.created DESC, api_keys.id`,
    [accountId],
  );
  const records = new Map((await loadKeysFile(keysFile)).keys.map((k) => [k.name, k]));
  return rows.map((r) => partnerKey(r, records.get(String(r.file_name)), now));
}

/** A key as the dashboard shows it: its row in the portal's database, and its record in the keys file (if there). */
export function partnerKey(row: Row, record: KeyRecord | undefined, now: number): PartnerKey {
  const grace = record ? graceUntil(record, now) : null;
  return {
    id: String(row.id),
    name: String(row.file_name),
    label: String(row.label),
    first4: String(row.first4),
    last4: String(row.last4),
    created: Number(row.created),
    status: !record || record.revoked ? "revoked" : record.suspended ? "suspended" : "active",
    ...(record?.rotated ? { rotated: record.rotated } : {}),
    ...(record?.revoked ? { revoked: record.revoked } : {}),
    ...(grace ? { graceUntil: grace } : {}),
    ...(record?.rate !== undefined ? { rate: record.rate } : {}),
    ...(record?.burst !== undefined ? { burst: record.burst } : {}),
    ...(typeof row.creator === "string" ? { createdBy: row.creator } : {}),
  };
}

/** The database row of key `keyId` if it belongs to `accountId`: the only way a key ID from a request is looked up. */
async function ownKey(db: PortalDatabase, accountId: string, keyId: string): Promise<{ fileName: string } | null> {
  const rows = await db.all("SELECT file_name FROM api_keys WHERE id = ? AND account_id = ?", [keyId, accountId]);
  return rows[0] ? { fileName: String(rows[0].file_name) } : null;
}

/**
 * Makes a key for the organisation `account` (its founding account's ID, rate and burst), by member `createdBy` (an
 * account ID): counted against `limit` and added in one change of the keys file (under its lock, so
 * two creations at once cannot pass the limit), with the account's own rate and burst if an operator set them; then
 * labelled in the database. Returns the key: the only time it is seen.
 */
export async function createPartnerKey(
  db: PortalDatabase,
  keysFile: string,
  account: { id: string; rate: number | null; burst: number | null },
  label: string,
  limit: number,
  now: number,
  createdBy: string = account.id,
): Promise<{ id: string; key: string }> {
  const accountId = account.id;
  const id = randomId(10);
  const name = keyFileName(accountId, id);
  const key = generateKey();
  await updateKeysFile(keysFile, new Date(now), (file) => {
    const live = file.keys.filter((k) => k.name.startsWith(`p.${accountId}.`) && !k.revoked).length;
    if (live >= limit) throw new KeyLimitError(limit);
    const record: KeyRecord = { name, hash: hashKey(key), created: new Date(now).toISOString() };
    if (account.rate !== null)
      applyLimits(record, { rate: account.rate, ...(account.burst ? { burst: account.burst } : {}) });
    file.keys.push(record);
  });
  try {
    await db.run(
      `INSERT INTO api_keys (id, account_id, file_name, label, first4, last4, created, created_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [id, accountId, name, label, key.slice(0, 4), key.slice(-4), now, createdBy],
    );
  } catch (err) {
    await revokeKey(keysFile, name, new Date(now)); // a key with no owner in the portal must not work
    throw err;
  }
  return { id, key };
}

/**
 * Replaces the account's key `keyId`, the old one working for `graceMs` (a key it replaced before is refused from
 * now on: see rotateKey); null if the account has no such live key.
 */
export async function rotatePartnerKey(
  db: PortalDatabase,
  keysFile: string,
  accountId: string,
  keyId: string,
  graceMs: number,
  now: number,
): Promise<string | null> {
  const own = await ownKey(db, accountId, keyId);
  if (!own) return null;
  let key: string;
  try {
    key = await rotateKey(keysFile, own.fileName, graceMs, new Date(now));
  } catch (err) {
    if (err instanceof KeyInputError) return null; // revoked, or gone from the file
    throw err;
  }
  await db.run("UPDATE api_keys SET first4 = ?, last4 = ? WHERE id = ?", [key.slice(0, 4), key.slice(-4), keyId]);
  return key;
}

/** Revokes the account's key `keyId` (and any key it replaced); false if the account has no such live key. */
export async function revokePartnerKey(
  db: PortalDatabase,
  keysFile: string,
  accountId: string,
  keyId: string,
  now: number,
): Promise<boolean> {
  const own = await ownKey(db, accountId, keyId);
  if (!own) return false;
  try {
    await revokeKey(keysFile, own.fileName, new Date(now));
  } catch (err) {
    if (err instanceof KeyInputError) return false;
    throw err;
  }
  return true;
}

/** Revokes every key of the account in one change of the keys file (before the account is deleted). */
export async function revokeAllPartnerKeys(keysFile: string, accountId: string, now: number): Promise<number> {
  return updateKeysFile(keysFile, new Date(now), (file) => {
    let count = 0;
    for (const record of file.keys) {
      if (!record.name.startsWith(`p.${accountId}.`) || record.revoked) continue;
      record.revoked = new Date(now).toISOString();
      delete record.previous;
      count++;
    }
    return count;
  });
}
