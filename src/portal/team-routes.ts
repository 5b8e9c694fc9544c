// The team's routes: the team page, an owner's invitations, role changes and removals, a member leaving or acting for
// another of their organisations; and an invitation's link, accepted signed in as its address or by making an account
// for it. Roles are checked here on every request (requireRole), and a member ID from a path is looked up only in the
// session's organisation: another organisation's is a 404. An invitation, a member joining, a removal and a role
// change are mailed to the owners, the member who acted and the member concerned, in the transaction of the change.
import type { Hono } from "hono";
import { html } from "hono/html";
import { startSession, textFields } from "./account-access.ts";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import {
  accountOf,
  clientAddress,
  fieldOf,
  formOf,
  limitAddress,
  orgOf,
  pageContext,
  render,
  requireAccount,
  requireRole,
} from "./context.ts";
import { InviteSchema, InvitedSignUpSchema, RoleSchema, parseForm } from "./forms.ts";
import { takeMailLimits, tooManyMails } from "./mail-limits.ts";
import { hashPassword } from "./passwords.ts";
import { randomId } from "./secrets.ts";
import { organisationRecipients, recordSecurityEvent } from "./security-mail.ts";
import type { SecurityEvent } from "./security-mail.ts";
import { clearSessionCookie } from "./session-cookies.ts";
import { createAccount, findAccountByEmail, normalizeEmail } from "./store/accounts.ts";
import { listAudit, recordAudit } from "./store/audit.ts";
import type { AuditEvent } from "./store/audit.ts";
import {
  cancelInvitation,
  consumeInvitation,
  createInvitation,
  listInvitations,
  peekInvitation,
} from "./store/invitations.ts";
import {
  addMember,
  changeMember,
  changeMemberIn,
  findMembership,
  listMembers,
  listMemberships,
} from "./store/organisations.ts";
import type { Member, MemberChange, MemberRole } from "./store/organisations.ts";
import type { Queries } from "../db/database.ts";
import { switchSession } from "./store/sessions.ts";
import { deadLink } from "./views/auth-pages.ts";
import {
  acceptPage,
  invitedSignUpPage,
  memberTeamPage,
  otherAddress,
  ownerTeamPage,
  signInFirst,
} from "./views/team-pages.ts";
import type { TeamForms } from "./views/team-pages.ts";
import type { Account } from "./store/accounts.ts";
import type { Invitation } from "./store/invitations.ts";

const MESSAGES: Record<string, string> = {
  invited: "The invitation is sent.",
  withdrawn: "The invitation is withdrawn.",
  role: "The role is changed.",
  removed: "The member is removed, and signed out.",
};
const noMember = html`<p>There is no such member of your organisation. <a href="/team">Your team</a>.</p>`;
const lastOwner = "An organisation keeps at least one owner: make another member an owner first.";
/** A member ID as the portal makes them (account IDs). */
const MEMBER_ID = /^[a-z0-9]{1,40}$/;

/** The team page, as the session's role sees it. */
const show = async (portal: Portal, c: PortalContext, status: 200 | 400 | 403 | 409 | 429, state: TeamForms = {}) => {
  const org = orgOf(c);
  const account = accountOf(c);
  const all = await listMemberships(portal.db, account.id);
  const ctx = pageContext(c, portal);
  if (org.role !== "owner") return render(c, portal, status, "Team", memberTeamPage(ctx, org, all, state));
  const view = {
    org,
    all,
    you: account.id,
    members: await listMembers(portal.db, org.id),
    invitations: await listInvitations(portal.db, org.id, portal.clock()),
    trail: await listAudit(portal.db, org.id),
  };
  return render(c, portal, status, "Team", ownerTeamPage(ctx, view, state));
};

/** Records an event on the organisation's trail, by the signed-in member. */
const audit = (portal: Portal, c: PortalContext, orgId: string, event: AuditEvent, detail: string) =>
  recordAudit(portal.db, orgId, {
    at: portal.clock(),
    event,
    detail,
    address: clientAddress(c),
    actor: accountOf(c).email,
  });

/**
 * Records a member event of organisation `orgId`, done by `actor` (the signed-in member, or the one joining), on its
 * trail, mailed to its owners, `actor` and `also` (the member concerned), in one transaction with `change` (see
 * recordSecurityEvent): whether it was recorded.
 */
async function memberEvent(
  portal: Portal,
  c: PortalContext,
  n: { orgId: string; actor: { email: string }; also?: string; what: SecurityEvent; detail: string; once?: string },
  change?: (tx: Queries) => Promise<boolean>,
): Promise<boolean> {
  const recipients = await organisationRecipients(portal.db, n.orgId, n.actor);
  const notice = {
    accountId: n.orgId,
    recipients: n.also ? [...recipients, n.also] : recipients,
    at: portal.clock(),
    address: clientAddress(c),
    actor: n.actor.email,
    detail: n.detail,
    what: n.what,
    ...(n.once ? { once: n.once } : {}),
  };
  return recordSecurityEvent(portal, notice, change);
}

/** The answer to a change of membership that was not made. */
const refused = (portal: Portal, c: PortalContext, change: Exclude<MemberChange, "done" | "same">) =>
  change === "no-member"
    ? render(c, portal, 404, "Not found", noMember)
    : change === "last-owner"
      ? show(portal, c, 409, { problem: lastOwner })
      : render(c, portal, 403, "Not allowed", html`<p>Only an owner may do this. <a href="/team">Your team</a>.</p>`);

/** Adds the team's and the invitations' routes to `app`. */
export function registerTeamRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  app.use("/team", requireRole(portal, "owner", "developer", "viewer"));
  app.use("/team/switch", requireAccount);
  const owners = requireRole(portal, "owner");
  app.use("/team/invite", owners);
  app.use("/team/members/*", owners);
  app.use("/team/invitations/*", owners);
  app.use("/team/leave", requireRole(portal, "owner", "developer", "viewer"));
  app.get("/team", (c) => show(portal, c, 200, { message: MESSAGES[c.req.query("done") ?? ""] }));
  registerInvitation(app, portal);
  registerMemberChanges(app, portal);
  registerAcceptance(app, portal);
}

/** An owner's invitation by email (within the mail limits), and its withdrawal. */
function registerInvitation(app: Hono<PortalEnv>, portal: Portal): void {
  app.post("/team/invite", async (c) => {
    const body = textFields(await formOf(c));
    const form = parseForm(InviteSchema, body);
    if (!form.ok) return show(portal, c, 400, { values: body, errors: form.errors });
    const org = orgOf(c);
    const email = normalizeEmail(form.data.email);
    if ((await listMembers(portal.db, org.id)).some((m) => m.email === email))
      return show(portal, c, 400, { values: body, errors: { email: `${email} is a member already` } });
    const wait = await takeMailLimits(portal, { address: limitAddress(c), to: email, account: accountOf(c).id });
    if (wait) {
      c.header("Retry-After", String(wait));
      return show(portal, c, 429, { values: body, errors: { email: tooManyMails(wait) } });
    }
    const { role } = form.data;
    const fields = { orgId: org.id, email, role, invitedBy: accountOf(c).email };
    const id = randomId(16);
    const what = { event: "member.invited" as const, org: org.name, email, role };
    const n = { orgId: org.id, actor: accountOf(c), what, detail: `${email} as ${role}`, once: `invited:${id}` };
    await memberEvent(portal, c, n, async (tx) => (await createInvitation(tx, fields, portal.clock(), id)) === id);
    await portal.mailer.send({ link: "invite", invitationId: id, to: email });
    return c.redirect("/team?done=invited", 303);
  });
  app.post("/team/invitations/:id/withdraw", async (c) => {
    const id = c.req.param("id");
    if (!/^[a-z0-9]{16}$/.test(id) || !(await cancelInvitation(portal.db, orgOf(c).id, id)))
      return render(c, portal, 404, "Not found", noMember);
    await audit(portal, c, orgOf(c).id, "member.invitation_withdrawn", "");
    return c.redirect("/team?done=withdrawn", 303);
  });
}

/** An owner's change of a member's role or removal; a member leaving; acting for another organisation. */
function registerMemberChanges(app: Hono<PortalEnv>, portal: Portal): void {
  const target = async (c: PortalContext) => {
    const id = c.req.param("id") ?? "";
    if (!MEMBER_ID.test(id)) return null;
    return (await listMembers(portal.db, orgOf(c).id)).find((m) => m.accountId === id) ?? null;
  };
  /** Gives `member` `role` (null: removes them), mailed (memberEvent) when it is done; what it came to. */
  const changeOf = async (c: PortalContext, member: Member, role: MemberRole | null): Promise<MemberChange> => {
    const org = orgOf(c);
    let change = "no-member" as MemberChange;
    const what: SecurityEvent = role
      ? { event: "member.role_changed", org: org.name, email: member.email, from: member.role, to: role }
      : { event: "member.removed", org: org.name, email: member.email, role: member.role };
    const detail = role ? `${member.email}: ${member.role} -> ${role}` : `${member.email} (${member.role})`;
    const n = { orgId: org.id, actor: accountOf(c), also: member.email, what, detail };
    await memberEvent(portal, c, n, async (tx) => {
      const asked = { orgId: org.id, accountId: member.accountId, actorId: accountOf(c).id, role };
      change = await changeMemberIn(tx, portal.db.dialect, asked);
      return change === "done";
    });
    return change;
  };
  app.post("/team/members/:id/role", async (c) => {
    const member = await target(c);
    if (!member) return render(c, portal, 404, "Not found", noMember);
    const form = parseForm(RoleSchema, await formOf(c));
    if (!form.ok) return show(portal, c, 400, { problem: form.errors.role });
    const change = await changeOf(c, member, form.data.role);
    if (change !== "done" && change !== "same") return refused(portal, c, change);
    return c.redirect(member.accountId === accountOf(c).id && change === "done" ? "/" : "/team?done=role", 303);
  });
  app.post("/team/members/:id/remove", async (c) => {
    const member = await target(c);
    if (!member) return render(c, portal, 404, "Not found", noMember);
    const change = await changeOf(c, member, null);
    if (change !== "done" && change !== "same") return refused(portal, c, change);
    if (member.accountId !== accountOf(c).id) return c.redirect("/team?done=removed", 303);
    clearSessionCookie(c, c.get("secureCookies"));
    return c.redirect("/sign-in?signed-out=1", 303);
  });
  app.post("/team/leave", async (c) => {
    const org = orgOf(c);
    const change = await changeMember(portal.db, org.id, accountOf(c).id, accountOf(c).id, null);
    if (change !== "done" && change !== "same") return refused(portal, c, change);
    await audit(portal, c, org.id, "member.left", org.role);
    // This session acted for the organisation left: it ended with the membership.
    clearSessionCookie(c, c.get("secureCookies"));
    c.set("account", null);
    return render(
      c,
      portal,
      200,
      "You left",
      html`<p role="status">You are no longer a member of ${org.name}. <a href="/sign-in">Sign in</a> again.</p>`,
    );
  });
  app.post("/team/switch", async (c) => {
    const org = await findMembership(portal.db, await fieldOf(c, "org"), accountOf(c).id);
    if (!org) return render(c, portal, 404, "Not found", html`<p>You are not a member of such an organisation.</p>`);
    await switchSession(portal.db, c.get("sessionId")!, org.id);
    return c.redirect("/", 303);
  });
}

/** An invitation's link: accepted signed in as its address, or by making an account for the address. */
function registerAcceptance(app: Hono<PortalEnv>, portal: Portal): void {
  const ctx = (c: PortalContext) => pageContext(c, portal);
  /**
   * Uses up invitation `inv` (of `token`) and makes `account` the member it invites, mailed to the organisation's owners
   * and the new member, in one transaction: the organisation and role, or null (used or expired by now).
   */
  const join = async (c: PortalContext, inv: Invitation, token: string, account: Account) => {
    let used = null as { orgId: string; role: MemberRole } | null;
    const what = { event: "member.joined" as const, org: inv.orgName, email: account.email, role: inv.role };
    const n = { orgId: inv.orgId, actor: account, what, detail: inv.role, once: `joined:${inv.id}` };
    await memberEvent(portal, c, n, async (tx) => {
      used = await consumeInvitation(tx, token, account.email, portal.clock());
      return used !== null && (await addMember(tx, used.orgId, account.id, used.role, portal.clock()));
    });
    return used;
  };
  app.get("/invitations/accept", async (c) => {
    const token = c.req.query("token") ?? "";
    const inv = await peekInvitation(portal.db, token, portal.clock());
    if (!inv) return render(c, portal, 404, "Link expired", deadLink);
    const account = c.get("account");
    if (account)
      return account.email === inv.email
        ? render(c, portal, 200, "Join a team", acceptPage(ctx(c), inv, token))
        : render(c, portal, 403, "Another address", otherAddress);
    if (await findAccountByEmail(portal.db, inv.email))
      return render(c, portal, 200, "Sign in to join", signInFirst(inv));
    return render(c, portal, 200, "Join a team", invitedSignUpPage(ctx(c), inv, token));
  });

  app.post("/invitations/accept", requireAccount, async (c) => {
    const token = await fieldOf(c, "token");
    const account = accountOf(c);
    const now = portal.clock();
    const inv = await peekInvitation(portal.db, token, now);
    if (inv && inv.email !== account.email) return render(c, portal, 403, "Another address", otherAddress);
    const used = inv ? await join(c, inv, token, account) : null;
    if (!used) return render(c, portal, 404, "Link expired", deadLink);
    await switchSession(portal.db, c.get("sessionId")!, used.orgId);
    return c.redirect("/", 303);
  });

  app.post("/invitations/sign-up", async (c) => {
    const body = textFields(await formOf(c));
    const now = portal.clock();
    const inv = await peekInvitation(portal.db, body.token ?? "", now);
    if (!inv) return render(c, portal, 404, "Link expired", deadLink);
    const form = parseForm(InvitedSignUpSchema, body);
    if (!form.ok)
      return render(c, portal, 400, "Join a team", invitedSignUpPage(ctx(c), inv, body.token ?? "", form.errors));
    if (await findAccountByEmail(portal.db, inv.email))
      return render(c, portal, 200, "Sign in to join", signInFirst(inv));
    const password = await hashPassword(form.data.password);
    // The link proves the address; the account is the organisation's member only (no organisation of its own, which an
    // operator would approve), active as the organisation is. Of two forms sent at once, one makes the account.
    const fields = { email: inv.email, partner: inv.orgName, password, verified: now, status: "active" as const };
    const account = await createAccount(portal.db, fields, now, false);
    if (!account) return render(c, portal, 200, "Sign in to join", signInFirst(inv));
    await recordAudit(portal.db, account.id, {
      at: now,
      event: "account.created",
      detail: "",
      address: clientAddress(c),
    });
    // Expired since it was looked at: the account is a member of nothing (its pages say so, and offer to delete it).
    const used = await join(c, inv, form.data.token, account);
    if (!used) return render(c, portal, 404, "Link expired", deadLink);
    await startSession(c, portal, account, "signin", "", used.orgId);
    return c.redirect("/", 303);
  });
}
