// Single-use tokens sent by mail (email verification, password reset, a new email), stored as hashes with an expiry,
// each bound to the account's credentials when it was issued: a change of password, email or verification kills it.
import type { PortalDatabase, Row } from "../../db/database.ts";
import { hashSecret, randomToken } from "../secrets.ts";
import { findAccount } from "./accounts.ts";
import type { Account } from "./accounts.ts";

export type TokenPurpose = "verify" | "reset" | "email";

/** How long each kind of link works, ms: verification 24 h, reset 1 h, a new email 24 h. */
const TOKEN_LIFETIME_MS: Record<TokenPurpose, number> = {
  verify: 24 * 3600_000,
  reset: 3600_000,
  email: 24 * 3600_000,
};

/**
 * What a token is bound to: a digest of the account's password hash, email and verification time. Whatever changes
 * one of them (a route, an operator, the CLI) kills the account's tokens, even where nothing deletes them.
 */
const credentialStamp = (account: Account) =>
  hashSecret(JSON.stringify([account.password, account.email, account.verified]));

/** Issues a token for `purpose` about `email`; returns the token (for the link; only its hash is kept). */
export async function issueToken(
  db: PortalDatabase,
  account: Account,
  purpose: TokenPurpose,
  email: string,
  now: number,
): Promise<string> {
  const token = randomToken();
  await db.run("INSERT INTO tokens (hash, account_id, purpose, email, expires, stamp) VALUES (?, ?, ?, ?, ?, ?)", [
    hashSecret(token),
    account.id,
    purpose,
    email,
    now + TOKEN_LIFETIME_MS[purpose],
    credentialStamp(account),
  ]);
  return token;
}

/** The account of a token's row, if the token is live: unexpired, and issued under the account's present credentials. */
async function liveAccount(db: PortalDatabase, row: Row | undefined, now: number): Promise<Account | null> {
  if (!row || Number(row.expires) <= now) return null;
  const account = await findAccount(db, String(row.account_id));
  return account && credentialStamp(account) === row.stamp ? account : null;
}

/** Whether `token` is a live token for `purpose` (without using it up): for the page a link opens. */
export async function peekToken(
  db: PortalDatabase,
  token: string,
  purpose: TokenPurpose,
  now: number,
): Promise<boolean> {
  return (await tokenAccount(db, token, purpose, now)) !== null;
}

/** The account of `token` if it is a live token for `purpose` (without using it up), else null. */
export async function tokenAccount(
  db: PortalDatabase,
  token: string,
  purpose: TokenPurpose,
  now: number,
): Promise<Account | null> {
  const rows = await db.all("SELECT account_id, expires, stamp FROM tokens WHERE hash = ? AND purpose = ?", [
    hashSecret(token),
    purpose,
  ]);
  return liveAccount(db, rows[0], now);
}

/**
 * Uses up `token` (deleted in the same statement, so it works once); its account (as it is now) and email if it was
 * live: unexpired, and issued under the account's present password, email and verification.
 */
export async function consumeToken(
  db: PortalDatabase,
  token: string,
  purpose: TokenPurpose,
  now: number,
): Promise<{ account: Account; email: string } | null> {
  const rows = await db.all(
    "DELETE FROM tokens WHERE hash = ? AND purpose = ? RETURNING account_id, email, expires, stamp",
    [hashSecret(token), purpose],
  );
  const account = await liveAccount(db, rows[0], now);
  return account && { account, email: String(rows[0]!.email) };
}

/** Deletes every token of an account: its password, email or verification has changed, and they were issued before. */
export async function deleteTokens(db: PortalDatabase, accountId: string): Promise<void> {
  await db.run("DELETE FROM tokens WHERE account_id = ?", [accountId]);
}
