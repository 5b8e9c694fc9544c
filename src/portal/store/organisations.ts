// Organisations (a partner's team) and their members with roles. An organisation's ID is its founder's account ID
// (migration 9), so keys, usage and the operator's pages of an account are those of the organisation it founded.
import type { PortalDatabase, Queries, Row } from "../../db/database.ts";

/** owner: members, settings, keys and usage; developer: keys and usage; viewer: usage only. */
export type MemberRole = "owner" | "developer" | "viewer";
export const MEMBER_ROLES: readonly MemberRole[] = ["owner", "developer", "viewer"];

const toRole = (value: unknown): MemberRole => MEMBER_ROLES.find((r) => r === value) ?? "viewer"; // unknown: least

/** An organisation as one of its members sees it. */
export interface Membership {
  id: string;
  name: string;
  role: MemberRole;
  /** Every member must sign in with two factors to use the portal for it (the settings page; migration 12). */
  requiresTwoFactor: boolean;
}

/** A member as the team page lists them. */
export interface Member {
  accountId: string;
  email: string;
  role: MemberRole;
  created: number;
}

/** The statements that make `accountId` the owner of a new organisation of its own (the same ID), named `name`. */
export const ownOrganisation = (accountId: string, name: string, now: number) => [
  { sql: "INSERT INTO organisations (id, name, created) VALUES (?, ?, ?)", params: [accountId, name, now] },
  {
    sql: "INSERT INTO members (org_id, account_id, role, created) VALUES (?, ?, 'owner', ?)",
    params: [accountId, accountId, now],
  },
];

const toMembership = (r: Row): Membership => ({
  id: String(r.id),
  name: String(r.name),
  role: toRole(r.role),
  requiresTwoFactor: Number(r.require_two_factor) === 1,
});

/** The organisation `orgId` if `accountId` is its member, with their role; else null. */
export async function findMembership(db: PortalDatabase, orgId: string, accountId: string): Promise<Membership | null> {
  const rows = await db.all(
    `SELECT organisations.id, organisations.name, organisations.require_two_factor, members.role FROM members
     JOIN organisations ON organisations.id = members.org_id WHERE members.org_id = ? AND members.account_id = ?`,
    [orgId, accountId],
  );
  return rows[0] ? toMembership(rows[0]) : null;
}

/** The organisations `accountId` is a member of: its own first (if it still is), then by when it joined. */
export async function listMemberships(db: PortalDatabase, accountId: string): Promise<Membership[]> {
  const rows = await db.all(
    `SELECT organisations.id, organisations.name, organisations.require_two_factor, members.role FROM members
     JOIN organisations ON organisations.id = members.org_id WHERE members.account_id = ?
     ORDER BY CASE WHEN organisations.id = ? THEN 0 ELSE 1 END, members.created, organisations.id`,
    [accountId, accountId],
  );
  return rows.map(toMembership);
}

/** The members of `orgId`, owners first, then by address. */
export async function listMembers(db: PortalDatabase, orgId: string): Promise<Member[]> {
  const rows = await db.all(
    `SELECT members.account_id, accounts.email, members.role, members.created FROM members
     JOIN accounts ON accounts.id = members.account_id WHERE members.org_id = ?
     ORDER BY CASE members.role WHEN 'owner' THEN 0 WHEN 'developer' THEN 1 ELSE 2 END, accounts.email`,
    [orgId],
  );
  return rows.map((r) => ({
    accountId: String(r.account_id),
    email: String(r.email),
    role: toRole(r.role),
    created: Number(r.created),
  }));
}

/** Makes `accountId` a member of `orgId` with `role`; false if it already was one (its role is kept). */
export async function addMember(
  db: Queries,
  orgId: string,
  accountId: string,
  role: MemberRole,
  now: number,
): Promise<boolean> {
  const added = await db.run(
    `INSERT INTO members (org_id, account_id, role, created) VALUES (?, ?, ?, ?)
     ON CONFLICT (org_id, account_id) DO NOTHING`,
    [orgId, accountId, role, now],
  );
  return added > 0;
}

/** What a change of membership came to ("same": the member has that role already, and nothing was written). */
export type MemberChange = "done" | "same" | "last-owner" | "no-member" | "not-owner";

/**
 * Removes `accountId` from `orgId` (`role` null) or gives it `role`, as `actorId` asks: an owner, or the member
 * themself leaving. The last owner can neither leave, be removed nor lose the role. In one transaction that holds the
 * organisation (PostgreSQL: its row locked; SQLite: one writer at a time), so that two owners removing each other at
 * once leave one. A removed member's sessions for the organisation end with it.
 */
export async function changeMember(
  db: PortalDatabase,
  orgId: string,
  accountId: string,
  actorId: string,
  role: MemberRole | null,
): Promise<MemberChange> {
  return db.transaction((tx) => changeMemberIn(tx, db.dialect, { orgId, accountId, actorId, role }));
}

/** changeMember's work, in the caller's transaction `tx` (the security mail's, security-mail.ts) on `dialect`. */
export async function changeMemberIn(
  tx: Queries,
  dialect: PortalDatabase["dialect"],
  change: { orgId: string; accountId: string; actorId: string; role: MemberRole | null },
): Promise<MemberChange> {
  const { orgId, accountId, actorId, role } = change;
  if (dialect === "postgres") await tx.all("SELECT id FROM organisations WHERE id = ? FOR UPDATE", [orgId]);
  const roles = new Map(
    (await tx.all("SELECT account_id, role FROM members WHERE org_id = ?", [orgId])).map((r) => [
      String(r.account_id),
      toRole(r.role),
    ]),
  );
  const leaving = role === null && actorId === accountId;
  if (roles.get(actorId) !== "owner" && !leaving) return "not-owner";
  const was = roles.get(accountId);
  if (!was) return "no-member";
  if (was === role) return "same";
  const owners = [...roles.values()].filter((r) => r === "owner").length;
  if (was === "owner" && role !== "owner" && owners <= 1) return "last-owner";
  if (role) {
    await tx.run("UPDATE members SET role = ? WHERE org_id = ? AND account_id = ?", [role, orgId, accountId]);
  } else {
    await tx.run("DELETE FROM members WHERE org_id = ? AND account_id = ?", [orgId, accountId]);
    await tx.run("DELETE FROM sessions WHERE org_id = ? AND account_id = ?", [orgId, accountId]);
  }
  return "done";
}

/** Renames `orgId` to `name`: false when that is its name already (nothing written). */
export async function renameOrganisation(db: Queries, orgId: string, name: string): Promise<boolean> {
  return (await db.run("UPDATE organisations SET name = ? WHERE id = ? AND name <> ?", [name, orgId, name])) > 0;
}

/**
 * Makes two-factor sign-in required (`on`) of every member of `orgId`, or not: false when it was so already (nothing
 * written; of two identical changes sent at once, one makes it).
 */
export async function requireTwoFactor(db: Queries, orgId: string, on: boolean): Promise<boolean> {
  const value = on ? 1 : 0;
  const changed = await db.run(
    "UPDATE organisations SET require_two_factor = ? WHERE id = ? AND require_two_factor <> ?",
    [value, orgId, value],
  );
  return changed > 0;
}

/**
 * Whether deleting account `accountId` would leave a team behind: its own organisation (its ID) has other members, or
 * it is the only owner of one that has.
 */
export async function holdsATeam(db: PortalDatabase, accountId: string): Promise<boolean> {
  const rows = await db.all(
    `SELECT m.org_id FROM members m WHERE (m.org_id = ? AND m.account_id <> ?) OR (m.account_id = ? AND m.role = 'owner'
       AND (SELECT COUNT(*) FROM members o WHERE o.org_id = m.org_id AND o.role = 'owner') = 1
       AND (SELECT COUNT(*) FROM members x WHERE x.org_id = m.org_id) > 1)
     LIMIT 1`,
    [accountId, accountId, accountId],
  );
  return rows.length > 0;
}
