// Two-factor sign-in's rows: each account's TOTP factor (sealed secret, confirmation, the last step accepted), its
// recovery codes (hashed) and the sign-ins waiting for a code (its passkeys: passkeys.ts). Every use of a code is one statement that only one
// request can win: two requests with the same code at once cannot both pass.
import { first } from "../../db/database.ts";
import type { PortalDatabase, Queries } from "../../db/database.ts";
import { hashSecret, randomToken } from "../secrets.ts";

/** An account's TOTP factor: its sealed secret, and when it was confirmed (null: being set up). */
interface TotpFactor {
  sealed: string;
  confirmed: number | null;
}

/** The account's TOTP factor, if it has one (set up or being set up). */
export async function findTotp(db: PortalDatabase, accountId: string): Promise<TotpFactor | null> {
  const row = await first(db, "SELECT sealed, confirmed FROM totp_factors WHERE account_id = ?", [accountId]);
  return row ? { sealed: String(row.sealed), confirmed: row.confirmed === null ? null : Number(row.confirmed) } : null;
}

/**
 * Whether the account signs in with two factors: a confirmed TOTP factor, or at least one passkey. The one question
 * every rule about two-factor asks (the sign-in's second step, turning a factor off, the recovery codes, an
 * organisation's requirement of it: two-factor-requirement.ts).
 */
export async function hasSecondFactor(db: Pick<PortalDatabase, "all">, accountId: string): Promise<boolean> {
  const row = await first(
    db,
    `SELECT (SELECT COUNT(*) FROM totp_factors WHERE account_id = ? AND confirmed IS NOT NULL)
          + (SELECT COUNT(*) FROM passkeys WHERE account_id = ?) AS n`,
    [accountId, accountId],
  );
  return Number(row?.n ?? 0) > 0;
}

/** Starts setting up a factor with `sealed`, replacing one being set up; false when the account has one confirmed. */
export async function startTotp(db: PortalDatabase, accountId: string, sealed: string, now: number): Promise<boolean> {
  const rows = await db.all(
    `INSERT INTO totp_factors (account_id, sealed, created, confirmed, last_step) VALUES (?, ?, ?, NULL, 0)
     ON CONFLICT (account_id) DO UPDATE SET sealed = excluded.sealed, created = excluded.created, last_step = 0
     WHERE totp_factors.confirmed IS NULL
     RETURNING account_id`,
    [accountId, sealed, now],
  );
  return rows.length === 1;
}

/**
 * Confirms the factor being set up (the code of `step` was right) and gives the account `codeHashes` as its recovery
 * codes, replacing any it had. False when there was none being set up (another request confirmed it first).
 */
export async function confirmTotp(
  db: PortalDatabase,
  accountId: string,
  sealed: string,
  step: number,
  codeHashes: string[],
  now: number,
): Promise<boolean> {
  const confirmed = await db.run(
    "UPDATE totp_factors SET confirmed = ?, last_step = ? WHERE account_id = ? AND sealed = ? AND confirmed IS NULL",
    [now, step, accountId, sealed],
  );
  if (confirmed !== 1) return false;
  await replaceRecoveryCodes(db, accountId, codeHashes, now);
  return true;
}

/**
 * Records that the code of `step` was used: true for the one request that does it; false when a code of this step or
 * a later one was accepted already (a replay), or the account has no confirmed factor.
 */
export async function useTotpStep(db: PortalDatabase, accountId: string, step: number): Promise<boolean> {
  const changed = await db.run(
    "UPDATE totp_factors SET last_step = ? WHERE account_id = ? AND confirmed IS NOT NULL AND last_step < ?",
    [step, accountId, step],
  );
  return changed === 1;
}

/** Uses the recovery code of hash `codeHash`: true for the one request that does, false when unknown or used. */
export async function useRecoveryCode(db: PortalDatabase, accountId: string, codeHash: string, now: number) {
  const changed = await db.run(
    "UPDATE recovery_codes SET used = ? WHERE account_id = ? AND code_hash = ? AND used IS NULL",
    [now, accountId, codeHash],
  );
  return changed === 1;
}

/** The account's recovery codes not used yet. */
export async function recoveryCodesLeft(db: PortalDatabase, accountId: string): Promise<number> {
  const row = await first(db, "SELECT COUNT(*) AS n FROM recovery_codes WHERE account_id = ? AND used IS NULL", [
    accountId,
  ]);
  return Number(row?.n ?? 0);
}

/** Gives the account `codeHashes` as its recovery codes; the old ones, used or not, are gone. */
export async function replaceRecoveryCodes(db: PortalDatabase, accountId: string, codeHashes: string[], now: number) {
  await db.batch([
    { sql: "DELETE FROM recovery_codes WHERE account_id = ?", params: [accountId] },
    ...codeHashes.map((hash) => ({
      sql: "INSERT INTO recovery_codes (code_hash, account_id, created, used) VALUES (?, ?, ?, NULL)",
      params: [hash, accountId, now],
    })),
  ]);
}

/**
 * Removes the account's TOTP factor; and, when it has no passkey left (two-factor turned off), its recovery codes and
 * waiting sign-ins too, in the same transaction. Returns whether two-factor is now off.
 */
export async function removeTotp(db: PortalDatabase, accountId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.run("DELETE FROM totp_factors WHERE account_id = ?", [accountId]);
    if (await hasSecondFactor(tx, accountId)) return false;
    await clearSecondFactor(tx, accountId);
    return true;
  });
}

/** Drops the recovery codes and waiting sign-ins of an account left with no second factor (two-factor off). */
export async function clearSecondFactor(tx: Queries, accountId: string): Promise<void> {
  for (const table of ["totp_factors", "recovery_codes", "signin_challenges"])
    await tx.run(`DELETE FROM ${table} WHERE account_id = ?`, [accountId]);
}

/** How long a right password waits for its code, ms. */
const CHALLENGE_TTL_MS = 5 * 60_000;

/** A sign-in of `accountId` waiting for its code: returns the token for the pending cookie (only its hash is kept). */
export async function createChallenge(db: PortalDatabase, accountId: string, now: number): Promise<string> {
  const token = randomToken();
  await db.run("DELETE FROM signin_challenges WHERE created <= ?", [now - CHALLENGE_TTL_MS]);
  await db.run("INSERT INTO signin_challenges (id_hash, account_id, created) VALUES (?, ?, ?)", [
    hashSecret(token),
    accountId,
    now,
  ]);
  return token;
}

/** The account whose sign-in `token` waits for a code, if it has not expired. */
export async function challengeAccount(db: PortalDatabase, token: string, now: number): Promise<string | null> {
  const row = await first(db, "SELECT account_id FROM signin_challenges WHERE id_hash = ? AND created > ?", [
    hashSecret(token),
    now - CHALLENGE_TTL_MS,
  ]);
  return row ? String(row.account_id) : null;
}

/** Ends the waiting sign-in `token`: true for the one request that does (which then starts the session). */
export async function endChallenge(db: PortalDatabase, token: string): Promise<boolean> {
  return (await db.run("DELETE FROM signin_challenges WHERE id_hash = ?", [hashSecret(token)])) === 1;
}
