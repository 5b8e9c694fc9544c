// An organisation's settings, for its owners only (a developer or viewer is answered 403, and nothing is changed): its
// name, and whether every member must sign in with two factors (two-factor-requirement.ts enforces it), which an owner
// can turn on only once they have a second factor themselves. Each change is on the organisation's trail, naming the
// owner, and mailed to its owners in the transaction of the change (security-mail.ts).
import type { Hono } from "hono";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { accountOf, clientAddress, formOf, orgOf, pageContext, render, requireRole } from "./context.ts";
import { OrgNameSchema, RequireTwoFactorSchema, parseForm } from "./forms.ts";
import { organisationRecipients, recordSecurityEvent } from "./security-mail.ts";
import type { SecurityEvent } from "./security-mail.ts";
import { listMembers, renameOrganisation, requireTwoFactor } from "./store/organisations.ts";
import { hasSecondFactor } from "./store/two-factor.ts";
import type { Queries } from "../db/database.ts";
import { orgSettingsPage } from "./views/org-settings-page.ts";
import type { OrgSettingsForms } from "./views/org-settings-page.ts";

const TITLE = "Organisation settings";
const MESSAGES: Record<string, string> = {
  renamed: "The name is changed.",
  required: "Two-factor sign-in is now required of every member.",
  optional: "Two-factor sign-in is no longer required.",
  same: "Nothing was changed: that was the setting already.",
};
/** Why an owner without two-factor cannot require it. */
const YOURS_FIRST =
  "You cannot require two-factor sign-in of every member before you use it yourself: set it up on your two-factor " +
  "sign-in page (Account), then come back here.";

/** The settings page with `status`. */
async function show(portal: Portal, c: PortalContext, status: 200 | 400 | 409, state: OrgSettingsForms = {}) {
  const org = orgOf(c);
  const members = await listMembers(portal.db, org.id);
  const without: string[] = [];
  for (const m of members) if (!(await hasSecondFactor(portal.db, m.accountId))) without.push(m.email);
  const youHaveIt = !without.includes(accountOf(c).email);
  return render(c, portal, status, TITLE, orgSettingsPage(pageContext(c, portal), { org, youHaveIt, without }, state));
}

/**
 * Records a change of the organisation's settings (`change`, in the transaction of its trail's line and mails: false
 * when it was so already) by the signed-in owner; redirects to the page with `done`, or `same` when nothing changed.
 */
async function settingChange(
  portal: Portal,
  c: PortalContext,
  what: SecurityEvent,
  detail: string,
  change: (tx: Queries) => Promise<boolean>,
  done: string,
) {
  const org = orgOf(c);
  const account = accountOf(c);
  const changed = await recordSecurityEvent(
    portal,
    {
      accountId: org.id,
      recipients: await organisationRecipients(portal.db, org.id, account),
      at: portal.clock(),
      address: clientAddress(c),
      actor: account.email,
      detail,
      what,
    },
    change,
  );
  return c.redirect(`/team/settings?done=${changed ? done : "same"}`, 303);
}

/** Adds the settings page's routes to `app`. */
export function registerOrgSettingsRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const owners = requireRole(portal, "owner");
  app.use("/team/settings", owners);
  app.use("/team/settings/*", owners);
  app.get("/team/settings", (c) => show(portal, c, 200, { message: MESSAGES[c.req.query("done") ?? ""] }));

  app.post("/team/settings/name", async (c) => {
    const body = await formOf(c);
    const form = parseForm(OrgNameSchema, body);
    if (!form.ok) {
      const name = typeof body.name === "string" ? body.name.slice(0, 200) : "";
      return show(portal, c, 400, { values: { name }, errors: form.errors });
    }
    const org = orgOf(c);
    const to = form.data.name;
    const what = { event: "org.renamed" as const, from: org.name, to };
    const detail = `"${org.name}" -> "${to}"`;
    return settingChange(portal, c, what, detail, (tx) => renameOrganisation(tx, org.id, to), "renamed");
  });

  app.post("/team/settings/two-factor", async (c) => {
    const form = parseForm(RequireTwoFactorSchema, await formOf(c));
    if (!form.ok) return show(portal, c, 400, { problem: "Tick the box, or leave it empty, and save." });
    const on = form.data.require === "on";
    if (on && !(await hasSecondFactor(portal.db, accountOf(c).id)))
      return show(portal, c, 409, { problem: YOURS_FIRST });
    const org = orgOf(c);
    const what = { event: "org.two_factor_required" as const, org: org.name, on };
    const change = (tx: Queries) => requireTwoFactor(tx, org.id, on);
    return settingChange(portal, c, what, on ? "on" : "off", change, on ? "required" : "optional");
  });
}
