// The team page (an organisation's members, their roles, invitations, its trail; a member's own role and leaving) and
// the pages an invitation's link opens.
import { html } from "hono/html";
import type { FieldErrors } from "../forms.ts";
import type { AuditEntry } from "../store/audit.ts";
import type { Invitation } from "../store/invitations.ts";
import type { Member, MemberRole, Membership } from "../store/organisations.ts";
import { MEMBER_ROLES } from "../store/organisations.ts";
import { auditTable } from "./audit-table.ts";
import { csrfField, errorSummary, field, notice, when } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";

/** What each role may do, in words. */
const ROLE_WORDS: Record<MemberRole, string> = {
  owner: "members, settings, keys and usage",
  developer: "keys and usage",
  viewer: "usage only",
};

/** The state of the team page's forms. */
export interface TeamForms {
  values?: Record<string, string>;
  errors?: FieldErrors;
  message?: string;
  problem?: string;
}

/** A select of the roles, `chosen` selected. */
const roleSelect = (id: string, chosen: MemberRole, label?: string) =>
  html`<select id="${id}" name="role" ${label ? html`aria-label="${label}"` : ""}>
    ${MEMBER_ROLES.map((r) => html`<option value="${r}" ${r === chosen ? "selected" : ""}>${r}</option>`)}
  </select>`;

/** The other organisations the account is a member of, each with a button to act for it. */
function switcher(ctx: PageContext, org: Membership, all: Membership[]): Html {
  const others = all.filter((m) => m.id !== org.id);
  if (!others.length) return html``;
  return html`<h2>Your other organisations</h2>
    <ul class="plain">
      ${others.map(
        (m) =>
          html`<li>
            <form method="post" action="/team/switch" class="inline">
              ${csrfField(ctx)}<input type="hidden" name="org" value="${m.id}" />
              ${m.name} (${m.role})
              <button type="submit" class="secondary" aria-label="Switch to ${m.name}">Switch</button>
            </form>
          </li>`,
      )}
    </ul>`;
}

/** One member's row: for an owner, the forms that change their role and remove them (or, their own, leave). */
function memberRow(ctx: PageContext, m: Member, you: boolean): Html {
  return html`<tr>
    <td class="who">
      ${m.email}${you ? " (you)" : ""}
      <p class="hint">joined ${when(m.created)}</p>
    </td>
    <td>
      <form method="post" action="/team/members/${m.accountId}/role" class="inline">
        ${csrfField(ctx)}${roleSelect(`role-${m.accountId}`, m.role, `Role of ${m.email}`)}
        <button type="submit" class="secondary" aria-label="Change the role of ${m.email}">Change</button>
      </form>
    </td>
    <td>
      ${
        you
          ? html`<form method="post" action="/team/leave" class="inline">
              ${csrfField(ctx)}<button type="submit" class="secondary">Leave</button>
            </form>`
          : html`<form method="post" action="/team/members/${m.accountId}/remove" class="inline">
              ${csrfField(ctx)}
              <button type="submit" class="danger" aria-label="Remove ${m.email}">Remove</button>
            </form>`
      }
    </td>
  </tr>`;
}

/** The team page as an owner sees it. */
export function ownerTeamPage(
  ctx: PageContext,
  view: {
    org: Membership;
    all: Membership[];
    you: string;
    members: Member[];
    invitations: Invitation[];
    trail: AuditEntry[];
  },
  state: TeamForms = {},
): Html {
  const errors = state.errors ?? {};
  return html`${notice(state.message)}${notice(state.problem, "alert")}
    <p>
      You are an <strong>owner</strong> of <strong>${view.org.name}</strong>. Owners manage ${ROLE_WORDS.owner};
      developers ${ROLE_WORDS.developer}; viewers ${ROLE_WORDS.viewer}. An organisation always keeps one owner.
    </p>
    <p>
      <a href="/team/settings">Organisation settings</a>: its name, and whether every member must use two-factor sign-in
      (${view.org.requiresTwoFactor ? "required now" : "not required now"}).
    </p>
    <h2>Members</h2>
    <table>
      <caption class="hint">
        The ${view.members.length} members of ${view.org.name}
      </caption>
      <thead>
        <tr>
          <th scope="col">Member</th>
          <th scope="col">Role</th>
          <th scope="col"><span class="hint">Remove</span></th>
        </tr>
      </thead>
      <tbody>
        ${view.members.map((m) => memberRow(ctx, m, m.accountId === view.you))}
      </tbody>
    </table>
    <h2>Invite a member</h2>
    <form method="post" action="/team/invite" novalidate>
      ${csrfField(ctx)}${errorSummary(errors, { email: "Email", role: "Role" })}
      ${field({ name: "email", label: "Email", type: "email", value: state.values?.email, error: errors.email, autocomplete: "off", hint: "We mail a link to this address: it works once, for that address only, for 7 days." })}
      <div class="field">
        <label for="f-role">Role</label>
        ${roleSelect("f-role", MEMBER_ROLES.find((r) => r === state.values?.role) ?? "developer")}
      </div>
      <button type="submit">Send the invitation</button>
    </form>
    <h2>Invitations waiting</h2>
    ${
      view.invitations.length
        ? html`<ul class="plain">
            ${view.invitations.map(
              (i) =>
                html`<li>
                  <form method="post" action="/team/invitations/${i.id}/withdraw" class="inline">
                    ${csrfField(ctx)} ${i.email} as ${i.role}, until ${when(i.expires)}
                    <button type="submit" class="secondary" aria-label="Withdraw the invitation of ${i.email}">
                      Withdraw
                    </button>
                  </form>
                </li>`,
            )}
          </ul>`
        : html`<p>None.</p>`
    }
    ${switcher(ctx, view.org, view.all)}
    <h2>Activity</h2>
    ${auditTable(view.trail, `The latest ${view.trail.length} events of ${view.org.name}, newest first`)}`;
}

/** The team page as a developer or viewer sees it: their role, and leaving. */
export function memberTeamPage(ctx: PageContext, org: Membership, all: Membership[], state: TeamForms = {}): Html {
  return html`${notice(state.message)}${notice(state.problem, "alert")}
    <p>
      You are a <strong>${org.role}</strong> of <strong>${org.name}</strong>: you may see ${ROLE_WORDS[org.role]}. Its
      owners manage its members.${org.requiresTwoFactor ? " It requires two-factor sign-in of every member." : ""}
    </p>
    <form method="post" action="/team/leave">
      ${csrfField(ctx)}
      <button type="submit" class="danger">Leave ${org.name}</button>
    </form>
    ${switcher(ctx, org, all)}`;
}

/** An invitation's page for whoever is signed in as its address: the button that accepts it. */
export const acceptPage = (ctx: PageContext, inv: Invitation, token: string) =>
  html`<p>
      ${inv.invitedBy} invited you to join <strong>${inv.orgName}</strong> as
      <strong>${inv.role}</strong> (${ROLE_WORDS[inv.role]}).
    </p>
    <form method="post" action="/invitations/accept">
      ${csrfField(ctx)}<input type="hidden" name="token" value="${token}" />
      <button type="submit">Join ${inv.orgName}</button>
    </form>`;

/** An invitation's page for an address with no account: a password makes one, which joins. */
export function invitedSignUpPage(ctx: PageContext, inv: Invitation, token: string, errors: FieldErrors = {}): Html {
  return html`<p>
      ${inv.invitedBy} invited <strong>${inv.email}</strong> to join <strong>${inv.orgName}</strong> as
      <strong>${inv.role}</strong> (${ROLE_WORDS[inv.role]}). Choose a password to make your account and join.
    </p>
    <form method="post" action="/invitations/sign-up" novalidate>
      ${csrfField(ctx)}${errorSummary(errors, { password: "Password" })}
      <input type="hidden" name="token" value="${token}" />
      <input type="email" autocomplete="username" value="${inv.email}" hidden readonly />
      ${field({ name: "password", label: "Password", type: "password", error: errors.password, autocomplete: "new-password", hint: "At least 12 characters." })}
      <button type="submit">Make my account and join</button>
    </form>`;
}

/** An invitation's page for an address that has an account, to someone not signed in as it. */
export const signInFirst = (inv: Invitation) =>
  html`<p>
    ${inv.invitedBy} invited <strong>${inv.email}</strong> to join <strong>${inv.orgName}</strong> as
    <strong>${inv.role}</strong>. That address has an account: <a href="/sign-in">sign in</a> as it, then open the link
    in the mail again.
  </p>`;

/** An invitation opened by someone signed in as another address. */
export const otherAddress = html`<p role="alert">
  This invitation is for another email address. Sign out, and sign in as the address it was sent to.
</p>`;
