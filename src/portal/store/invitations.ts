// Invitations to an organisation: made by an owner for one address and role, their link's token issued when the
// outbox sends the mail (only its hash kept), working once, for that address only, until it expires.
import type { PortalDatabase, Queries, Row } from "../../db/database.ts";
import { hashSecret, randomId, randomToken } from "../secrets.ts";
import { normalizeEmail } from "./accounts.ts";
import type { MemberRole } from "./organisations.ts";
import { MEMBER_ROLES } from "./organisations.ts";

/** How long an invitation works, ms: 7 days from when it was made. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3600_000;

/** An invitation as its page and the team page show it. */
export interface Invitation {
  id: string;
  orgId: string;
  orgName: string;
  email: string;
  role: MemberRole;
  invitedBy: string;
  expires: number;
}

const toInvitation = (r: Row): Invitation => ({
  id: String(r.id),
  orgId: String(r.org_id),
  orgName: String(r.name ?? ""),
  email: String(r.email),
  role: MEMBER_ROLES.find((role) => role === r.role) ?? "viewer",
  invitedBy: String(r.invited_by),
  expires: Number(r.expires),
});

const SELECT = `SELECT invitations.*, organisations.name FROM invitations
  JOIN organisations ON organisations.id = invitations.org_id`;

/**
 * Records an invitation of `email` to `orgId` as `role` by `invitedBy` (an email), with the ID `id` (default a new one);
 * returns its ID (for the mail).
 */
export async function createInvitation(
  db: Queries,
  fields: { orgId: string; email: string; role: MemberRole; invitedBy: string },
  now: number,
  id = randomId(16),
): Promise<string> {
  await db.run(
    `INSERT INTO invitations (id, hash, org_id, email, role, invited_by, created, expires)
     VALUES (?, NULL, ?, ?, ?, ?, ?, ?)`,
    [id, fields.orgId, normalizeEmail(fields.email), fields.role, fields.invitedBy, now, now + INVITATION_LIFETIME_MS],
  );
  return id;
}

/** Issues the token of invitation `id` (once: as its mail is sent); the token and the invitation, or null. */
export async function issueInvitationToken(
  db: PortalDatabase,
  id: string,
  now: number,
): Promise<{ token: string; invitation: Invitation } | null> {
  const token = randomToken();
  const set = await db.run("UPDATE invitations SET hash = ? WHERE id = ? AND hash IS NULL AND expires > ?", [
    hashSecret(token),
    id,
    now,
  ]);
  if (!set) return null;
  const rows = await db.all(`${SELECT} WHERE invitations.id = ?`, [id]);
  return rows[0] ? { token, invitation: toInvitation(rows[0]) } : null;
}

/** The live invitation of `token` (without using it up), or null. */
export async function peekInvitation(db: PortalDatabase, token: string, now: number): Promise<Invitation | null> {
  if (!token) return null;
  const rows = await db.all(`${SELECT} WHERE invitations.hash = ? AND invitations.expires > ?`, [
    hashSecret(token),
    now,
  ]);
  return rows[0] ? toInvitation(rows[0]) : null;
}

/**
 * Uses up the invitation of `token` if it is live and made for `email` (deleted in the same statement: it works once);
 * null otherwise, and then it is left as it was (another address cannot spend it).
 */
export async function consumeInvitation(
  db: Queries,
  token: string,
  email: string,
  now: number,
): Promise<{ orgId: string; role: MemberRole } | null> {
  if (!token) return null;
  const rows = await db.all(
    "DELETE FROM invitations WHERE hash = ? AND email = ? AND expires > ? RETURNING org_id, role",
    [hashSecret(token), normalizeEmail(email), now],
  );
  const row = rows[0];
  return row ? { orgId: String(row.org_id), role: MEMBER_ROLES.find((r) => r === row.role) ?? "viewer" } : null;
}

/** The invitations of `orgId` still waiting (unexpired), newest first. */
export async function listInvitations(db: PortalDatabase, orgId: string, now: number): Promise<Invitation[]> {
  const rows = await db.all(
    `${SELECT} WHERE invitations.org_id = ? AND invitations.expires > ? ORDER BY invitations.created DESC`,
    [orgId, now],
  );
  return rows.map(toInvitation);
}

/** Withdraws invitation `id` of `orgId`; false if it has no such invitation. */
export async function cancelInvitation(db: PortalDatabase, orgId: string, id: string): Promise<boolean> {
  return (await db.run("DELETE FROM invitations WHERE id = ? AND org_id = ?", [id, orgId])) > 0;
}
