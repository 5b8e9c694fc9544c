// Single-use tokens sent by mail (email verification, password reset, a new email), stored as hashes with an expiry.
import type { PortalDatabase } from "../db/database.ts";
import { hashSecret, randomToken } from "../secrets.ts";

export type TokenPurpose = "verify" | "reset" | "email";

/** How long each kind of link works, ms: verification 24 h, reset 1 h, a new email 24 h. */
const TOKEN_LIFETIME_MS: Record<TokenPurpose, number> = {
  verify: 24 * 3600_000,
  reset: 3600_000,
  email: 24 * 3600_000,
};

/** Issues a token for `purpose` about `email`; returns the token (for the link; only its hash is kept). */
export async function issueToken(
  db: PortalDatabase,
  accountId: string,
  purpose: TokenPurpose,
  email: string,
  now: number,
): Promise<string> {
  const token = randomToken();
  await db.run("INSERT INTO tokens (hash, account_id, purpose, email, expires) VALUES (?, ?, ?, ?, ?)", [
    hashSecret(token),
    accountId,
    purpose,
    email,
    now + TOKEN_LIFETIME_MS[purpose],
  ]);
  return token;
}

/** Whether `token` is a live token for `purpose` (without using it up): for the page a link opens. */
export async function peekToken(
  db: PortalDatabase,
  token: string,
  purpose: TokenPurpose,
  now: number,
): Promise<boolean> {
  const rows = await db.all("SELECT expires FROM tokens WHERE hash = ? AND purpose = ?", [hashSecret(token), purpose]);
  return rows.some((r) => Number(r.expires) > now);
}

/** Uses up `token` (deleted in the same statement, so it works once); its account and email if it was live. */
export async function consumeToken(
  db: PortalDatabase,
  token: string,
  purpose: TokenPurpose,
  now: number,
): Promise<{ accountId: string; email: string } | null> {
  const rows = await db.all("DELETE FROM tokens WHERE hash = ? AND purpose = ? RETURNING account_id, email, expires", [
    hashSecret(token),
    purpose,
  ]);
  const row = rows[0];
  if (!row || Number(row.expires) <= now) return null;
  return { accountId: String(row.account_id), email: String(row.email) };
}
