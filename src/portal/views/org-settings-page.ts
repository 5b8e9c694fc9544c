// An organisation's settings page, for its owners: its name, and whether every member must sign in with two factors
// (with who has not set it up yet, and whether the owner has: they must before they can require it).
import { html } from "hono/html";
import type { FieldErrors } from "../forms.ts";
import type { Membership } from "../store/organisations.ts";
import { csrfField, errorSummary, field, notice } from "./layout.ts";
import type { Html, PageContext } from "./layout.ts";

/** What the page shows of the organisation. */
export interface OrgSettingsView {
  org: Membership;
  /** The signed-in owner has a second factor (hasSecondFactor). */
  youHaveIt: boolean;
  /** The members without a second factor, by address. */
  without: string[];
}

/** The state of the page's forms. */
export interface OrgSettingsForms {
  values?: { name?: string };
  errors?: FieldErrors;
  message?: string;
  problem?: string;
}

/** Who has not set two-factor sign-in up, and whether the owner has. */
function whoHasIt(view: OrgSettingsView): Html {
  return html`<p>
      ${
        view.youHaveIt
          ? "You sign in with two factors."
          : html`You do not sign in with two factors yet: <a href="/account/two-factor">set it up</a> before you require
              it of everyone.`
      }
    </p>
    ${
      view.without.length
        ? html`<p>Members without two-factor sign-in now:</p>
            <ul>
              ${view.without.map((email) => html`<li>${email}</li>`)}
            </ul>`
        : html`<p>Every member signs in with two factors.</p>`
    }`;
}

/** The settings page. */
export function orgSettingsPage(ctx: PageContext, view: OrgSettingsView, state: OrgSettingsForms = {}): Html {
  const errors = state.errors ?? {};
  const required = view.org.requiresTwoFactor;
  return html`${notice(state.message)}${notice(state.problem, "alert")}
    <p>
      The settings of <strong>${view.org.name}</strong>. Each change is mailed to its owners and kept in its activity on
      the <a href="/team">team page</a>.
    </p>
    <h2>Name</h2>
    <form method="post" action="/team/settings/name" novalidate>
      ${csrfField(ctx)}${errorSummary(errors, { name: "Name" })}
      ${field({ name: "name", label: "Name", value: state.values?.name ?? view.org.name, error: errors.name, autocomplete: "organization", hint: "As invitations, mails and the team page name the organisation." })}
      <button type="submit">Save the name</button>
    </form>
    <h2>Two-factor sign-in</h2>
    <p>
      Two-factor sign-in is <strong>${required ? "required" : "not required"}</strong> of every member. When it is, a
      member without it is sent to set it up (an authenticator app) before any other page of the portal, from their next
      request on.
    </p>
    ${whoHasIt(view)}
    <form method="post" action="/team/settings/two-factor">
      ${csrfField(ctx)}
      <fieldset>
        <legend>Every member</legend>
        <label>
          <input type="checkbox" name="require" value="on" ${required ? "checked" : ""} />
          Require two-factor sign-in for every member
        </label>
      </fieldset>
      <button type="submit">Save the two-factor setting</button>
    </form>`;
}
