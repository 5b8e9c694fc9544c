// Partner accounts: email (stored lowercased), partner name, password hash, verification, role and status.
import { first } from "../db/database.ts";
import type { PortalDatabase, Row } from "../db/database.ts";
import { randomId } from "../secrets.ts";

/** An account as the portal uses it. */
export interface Account {
  id: string;
  email: string;
  partner: string;
  password: string;
  /** When the email was verified (ms), or null. */
  verified: number | null;
  role: "partner" | "admin";
  status: "active" | "suspended";
  created: number;
}

const toAccount = (r: Row): Account => ({
  id: String(r.id),
  email: String(r.email),
  partner: String(r.partner),
  password: String(r.password),
  verified: r.verified === null ? null : Number(r.verified),
  role: r.role === "admin" ? "admin" : "partner",
  status: r.status === "suspended" ? "suspended" : "active",
  created: Number(r.created),
});

/** Emails compare without case (the domain part is case-insensitive, and no real mailbox differs by case). */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** Makes an account; null when the email is taken. */
export async function createAccount(
  db: PortalDatabase,
  fields: { email: string; partner: string; password: string },
  now: number,
): Promise<Account | null> {
  const id = randomId();
  const rows = await db.all(
    `INSERT INTO accounts (id, email, partner, password, created) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (email) DO NOTHING RETURNING *`,
    [id, normalizeEmail(fields.email), fields.partner, fields.password, now],
  );
  return rows[0] ? toAccount(rows[0]) : null;
}

/** The account with this email, if any. */
export async function findAccountByEmail(db: PortalDatabase, email: string): Promise<Account | null> {
  const row = await first(db, "SELECT * FROM accounts WHERE email = ?", [normalizeEmail(email)]);
  return row ? toAccount(row) : null;
}

/** The account with this ID, if any. */
export async function findAccount(db: PortalDatabase, id: string): Promise<Account | null> {
  const row = await first(db, "SELECT * FROM accounts WHERE id = ?", [id]);
  return row ? toAccount(row) : null;
}

/** Changes some of an account's fields. Setting `email` returns false when another account has it. */
export async function updateAccount(
  db: PortalDatabase,
  id: string,
  fields: Partial<Pick<Account, "email" | "password" | "verified" | "role" | "status">>,
): Promise<boolean> {
  const entries = Object.entries(fields).map(([k, v]) => [k, k === "email" ? normalizeEmail(String(v)) : v] as const);
  if (fields.email !== undefined) {
    const owner = await findAccountByEmail(db, fields.email);
    if (owner && owner.id !== id) return false;
  }
  const set = entries.map(([k]) => `${k} = ?`).join(", ");
  await db.run(`UPDATE accounts SET ${set} WHERE id = ?`, [
    ...entries.map(([, v]) => (v === undefined ? null : v)),
    id,
  ]);
  return true;
}

/** Removes an account and everything the portal holds about it (its keys must have been revoked first). */
export async function deleteAccount(db: PortalDatabase, id: string): Promise<void> {
  await db.batch(
    ["sessions", "tokens", "api_keys", "audit"]
      .map((table) => ({
        sql: `DELETE FROM ${table} WHERE account_id = ?`,
        params: [id],
      }))
      .concat({ sql: "DELETE FROM accounts WHERE id = ?", params: [id] }),
  );
}
