// Partner accounts: email (stored lowercased), partner name, password hash, verification, role, status and limits.
import { first } from "../../db/database.ts";
import type { PortalDatabase, Queries, Row } from "../../db/database.ts";
import { randomId } from "../secrets.ts";
import { ownOrganisation } from "./organisations.ts";

/** An account as the portal uses it. */
export interface Account {
  id: string;
  email: string;
  partner: string;
  password: string;
  /** When the email was verified (ms), or null. */
  verified: number | null;
  role: "partner" | "admin";
  /** `pending` until an operator approves it (PORTAL_APPROVAL=manual); `suspended` by an operator: keys refused. */
  status: AccountStatus;
  created: number;
  /** The rate and burst an operator set for every key of the account, or null (the API's defaults). */
  rate: number | null;
  burst: number | null;
}

type AccountStatus = "active" | "pending" | "suspended";
const STATUSES: readonly AccountStatus[] = ["active", "pending", "suspended"];

const toAccount = (r: Row): Account => ({
  id: String(r.id),
  email: String(r.email),
  partner: String(r.partner),
  password: String(r.password),
  verified: r.verified === null ? null : Number(r.verified),
  role: r.role === "admin" ? "admin" : "partner",
  status: STATUSES.find((s) => s === r.status) ?? "suspended", // an unknown status is not taken for active
  created: Number(r.created),
  rate: r.rate === null || r.rate === undefined ? null : Number(r.rate),
  burst: r.burst === null || r.burst === undefined ? null : Number(r.burst),
});

/** Emails compare without case (the domain part is case-insensitive, and no real mailbox differs by case). */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * Makes an account (`pending` approval, or `active`: the default), the owner of an organisation of its own named after
 * its partner unless `team` is false (an invited person, who joins another); null when the email is taken.
 */
export async function createAccount(
  db: PortalDatabase,
  fields: { email: string; partner: string; password: string; status?: "active" | "pending"; verified?: number },
  now: number,
  team = true,
): Promise<Account | null> {
  const id = randomId();
  const rows = await db.all(
    `INSERT INTO accounts (id, email, partner, password, verified, status, created) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (email) DO NOTHING RETURNING *`,
    [
      id,
      normalizeEmail(fields.email),
      fields.partner,
      fields.password,
      fields.verified ?? null,
      fields.status ?? "active",
      now,
    ],
  );
  if (!rows[0]) return null;
  if (team) await db.batch(ownOrganisation(id, fields.partner, now));
  return toAccount(rows[0]);
}

/** The account with this email, if any. */
export async function findAccountByEmail(db: Queries, email: string): Promise<Account | null> {
  const row = await first(db, "SELECT * FROM accounts WHERE email = ?", [normalizeEmail(email)]);
  return row ? toAccount(row) : null;
}

/** The account with this ID, if any. */
export async function findAccount(db: PortalDatabase, id: string): Promise<Account | null> {
  const row = await first(db, "SELECT * FROM accounts WHERE id = ?", [id]);
  return row ? toAccount(row) : null;
}

/** The accounts with these IDs, in the order of `ids` (those that exist). */
export async function findAccounts(db: PortalDatabase, ids: readonly string[]): Promise<Account[]> {
  if (!ids.length) return [];
  const rows = await db.all(`SELECT * FROM accounts WHERE id IN (${ids.map(() => "?").join(", ")})`, [...ids]);
  const byId = new Map(rows.map((r) => [String(r.id), toAccount(r)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** Changes some of an account's fields. Setting `email` returns false when another account has it. */
export async function updateAccount(
  db: Queries,
  id: string,
  fields: Partial<Pick<Account, "email" | "password" | "verified" | "role" | "status" | "rate" | "burst">>,
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

/** Accounts by email, `limit` of them after the first `offset`. */
export async function listAccounts(db: PortalDatabase, limit: number, offset = 0): Promise<Account[]> {
  const rows = await db.all("SELECT * FROM accounts ORDER BY email LIMIT ? OFFSET ?", [limit, offset]);
  return rows.map(toAccount);
}

/**
 * Removes an account and everything the portal holds about it, its own organisation with it (its keys must have been
 * revoked first, and no one else may be a member of it: see holdsATeam), and its memberships of others.
 */
export async function deleteAccount(db: PortalDatabase, id: string): Promise<void> {
  await db.batch(
    [
      "sessions",
      "tokens",
      "api_keys",
      "audit",
      "signin_devices",
      "totp_factors",
      "recovery_codes",
      "signin_challenges",
      "passkeys",
      "passkey_challenges",
      "members",
    ]
      .map((table) => ({
        sql: `DELETE FROM ${table} WHERE account_id = ?`,
        params: [id],
      }))
      .concat(
        ["members", "invitations"].map((table) => ({ sql: `DELETE FROM ${table} WHERE org_id = ?`, params: [id] })),
        { sql: "DELETE FROM organisations WHERE id = ?", params: [id] },
        { sql: "DELETE FROM accounts WHERE id = ?", params: [id] },
      ),
  );
}
