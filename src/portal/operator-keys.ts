// What the operator pages change in the keys file: a whole account suspended or reinstated, an account's or a key's
// rate and burst; and what they read of it: every account's keys, and the keys `npm run keys` made (the operator's).
import { applyLimits, graceUntil, KeyInputError, loadKeysFile, updateKeysFile } from "../keys/keys-file.ts";
import type { KeyRecord, Limits } from "../keys/keys-file.ts";
import type { PortalDatabase } from "../db/database.ts";
import { partnerKey } from "./partner-keys.ts";
import type { PartnerKey } from "./partner-keys.ts";
import type { Account } from "./store/accounts.ts";

/** A rate and burst as the operator sets them: a burst left out is the API's own (4 seconds of the rate). */
export type OperatorLimits = { rate: number; burst?: number | undefined } | "default";

/** A key the portal does not own (made by `npm run keys`): shown under the operator, by its name in the keys file. */
export interface OperatorKey {
  name: string;
  created: string;
  status: PartnerKey["status"];
  rotated?: string;
  graceUntil?: string;
  rate?: number;
  burst?: number;
}

const prefix = (accountId: string) => `p.${accountId}.`;

/** Sets a record's limits as the operator asked: both replaced, so an old burst never outlives a new rate. */
function setLimits(record: KeyRecord, limits: OperatorLimits): void {
  applyLimits(record, "default");
  if (limits !== "default") {
    const own: Limits = { rate: limits.rate };
    if (limits.burst !== undefined) own.burst = limits.burst;
    applyLimits(record, own);
  }
}

/**
 * Marks every key of the account suspended (or no longer), in one change of the keys file under its lock: API servers
 * refuse a suspended record's key (src/serve/admission/api-key-check.ts), and take the change as they take any other. Returns the
 * number of keys changed.
 */
export async function setAccountSuspended(
  keysFile: string,
  accountId: string,
  suspended: boolean,
  now: number,
): Promise<number> {
  return updateKeysFile(keysFile, new Date(now), (file) => {
    let count = 0;
    for (const record of file.keys) {
      if (!record.name.startsWith(prefix(accountId)) || record.revoked) continue;
      if (suspended && record.suspended === undefined) record.suspended = new Date(now).toISOString();
      else if (!suspended && record.suspended !== undefined) delete record.suspended;
      else continue;
      count++;
    }
    return count;
  });
}

/** Sets the rate and burst of every live key of the account (the database keeps them for its keys made later). */
export async function setAccountKeyLimits(
  keysFile: string,
  accountId: string,
  limits: OperatorLimits,
  now: number,
): Promise<number> {
  return updateKeysFile(keysFile, new Date(now), (file) => {
    const records = file.keys.filter((k) => k.name.startsWith(prefix(accountId)) && !k.revoked);
    for (const record of records) setLimits(record, limits);
    return records.length;
  });
}

/** Sets the rate and burst of the live key named `name` in the keys file; throws KeyInputError if there is none. */
export async function setOneKeyLimits(keysFile: string, name: string, limits: OperatorLimits, now: number) {
  await updateKeysFile(keysFile, new Date(now), (file) => {
    const record = file.keys.find((k) => k.name === name);
    if (!record || record.revoked) throw new KeyInputError(`no live key named "${name}"`);
    setLimits(record, limits);
  });
}

/** Each of `accounts` with its keys (newest first), from one read of the keys file. */
export async function keysOfAccounts(
  db: PortalDatabase,
  keysFile: string,
  accounts: Account[],
  now: number,
): Promise<Map<string, PartnerKey[]>> {
  const byAccount = new Map<string, PartnerKey[]>(accounts.map((a) => [a.id, []]));
  if (!accounts.length) return byAccount;
  const records = new Map((await loadKeysFile(keysFile)).keys.map((k) => [k.name, k]));
  const rows = await db.all(
    `SELECT * FROM api_keys WHERE account_id IN (${accounts.map(() => "?").join(", ")}) ORDER BY created DESC, id`,
    accounts.map((a) => a.id),
  );
  for (const r of rows) byAccount.get(String(r.account_id))?.push(partnerKey(r, records.get(String(r.file_name)), now));
  return byAccount;
}

/**
 * The keys in the keys file that no portal account owns: those `npm run keys` made, by name (and any live key left
 * by a deleted account; its revoked ones are not listed).
 */
export async function listOperatorKeys(db: PortalDatabase, keysFile: string, now: number): Promise<OperatorKey[]> {
  const owned = new Set((await db.all("SELECT file_name FROM api_keys")).map((r) => String(r.file_name)));
  const { keys } = await loadKeysFile(keysFile);
  return keys
    .filter((k) => !owned.has(k.name) && !(k.name.startsWith("p.") && k.revoked))
    .map((k) => {
      const grace = graceUntil(k, now);
      return {
        name: k.name,
        created: k.created,
        status: k.revoked ? "revoked" : k.suspended ? "suspended" : "active",
        ...(k.rotated ? { rotated: k.rotated } : {}),
        ...(grace ? { graceUntil: grace } : {}),
        ...(k.rate !== undefined ? { rate: k.rate } : {}),
        ...(k.burst !== undefined ? { burst: k.burst } : {}),
      };
    });
}
