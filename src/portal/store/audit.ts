// The audit trail: what happened to an account or organisation (sign-ins, keys, members, passwords, operator
// actions), who did it, when, and from which client address; the partner sees their own, the operator everyone's.
import type { PortalDatabase, Queries } from "../../db/database.ts";
import { randomId } from "../secrets.ts";

/** The events recorded. */
export type AuditEvent =
  | "account.created"
  | "account.verified"
  | "signin"
  | "signin.failed"
  | "signin.code_failed"
  | "signout"
  | "password.changed"
  | "password.reset"
  | "email.change_requested"
  | "email.changed"
  | "twofactor.enabled"
  | "twofactor.disabled"
  | "twofactor.codes_renewed"
  | "passkey.added"
  | "passkey.renamed"
  | "passkey.removed"
  | "key.created"
  | "key.rotated"
  | "key.revoked"
  | "key.grace_ending"
  | "member.invited"
  | "member.invitation_withdrawn"
  | "member.joined"
  | "member.role_changed"
  | "member.removed"
  | "member.left"
  | "org.renamed"
  | "org.two_factor_required"
  | "webhook.added"
  | "webhook.rotated"
  | "webhook.disabled"
  | "webhook.enabled"
  | "webhook.deleted"
  | "operator.approved"
  | "operator.suspended"
  | "operator.reinstated"
  | "operator.account_limits"
  | "operator.key_limits";

/** One line of the trail. */
export interface AuditEntry {
  at: number;
  event: AuditEvent;
  detail: string;
  address: string;
  /**
   * The email of whoever did it: a member of the organisation, an operator. Left out when recording, it is the
   * account's own (an event of a person on their own account: a sign-in, a new password).
   */
  actor?: string;
}

/**
 * Records an event on an account. `detail` is shown to the partner: never a secret in it. With `id`, an event recorded
 * once: false when a row has that ID already (nothing written).
 */
export async function recordAudit(db: Queries, accountId: string, entry: AuditEntry, id?: string): Promise<boolean> {
  const changed = await db.run(
    `INSERT INTO audit (id, account_id, at, event, detail, address, actor)
     VALUES (?, ?, ?, ?, ?, ?, COALESCE(?, (SELECT email FROM accounts WHERE id = ?), ''))
     ON CONFLICT (id) DO NOTHING`,
    [id ?? randomId(16), accountId, entry.at, entry.event, entry.detail, entry.address, entry.actor ?? null, accountId],
  );
  return changed > 0;
}

/** An account's latest events, newest first (at most `limit`, default 100). */
export async function listAudit(db: PortalDatabase, accountId: string, limit = 100): Promise<AuditEntry[]> {
  const rows = await db.all(
    "SELECT at, event, detail, address, actor FROM audit WHERE account_id = ? ORDER BY at DESC LIMIT ?",
    [accountId, limit],
  );
  return rows.map((r) => ({
    at: Number(r.at),
    event: String(r.event) as AuditEvent,
    detail: String(r.detail),
    address: String(r.address),
    actor: String(r.actor),
  }));
}

/** A line of the operator's trail: an event and the account it happened to. */
export interface AccountAuditEntry extends AuditEntry {
  accountId: string;
  email: string;
}

/** Every account's events, newest first: `limit` of them after the first `offset` (a page). */
export async function listAllAudit(db: PortalDatabase, limit: number, offset = 0): Promise<AccountAuditEntry[]> {
  const rows = await db.all(
    `SELECT audit.at, audit.event, audit.detail, audit.address, audit.actor, audit.account_id, accounts.email
     FROM audit JOIN accounts ON accounts.id = audit.account_id
     ORDER BY audit.at DESC, audit.id LIMIT ? OFFSET ?`,
    [limit, offset],
  );
  return rows.map((r) => ({
    at: Number(r.at),
    event: String(r.event) as AuditEvent,
    detail: String(r.detail),
    address: String(r.address),
    actor: String(r.actor),
    accountId: String(r.account_id),
    email: String(r.email),
  }));
}
