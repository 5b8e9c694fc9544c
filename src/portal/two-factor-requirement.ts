// An organisation's requirement of two-factor sign-in (its settings page, org-settings-routes.ts): while the session
// acts for an organisation that requires it and the signed-in member has no second factor (hasSecondFactor), every
// page and form but the two-factor setup, signing out, acting for another organisation and the static files is
// answered with a redirect to the two-factor page (the gate), which says why. A form sent there is not performed.
import type { Hono } from "hono";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { hasSecondFactor } from "./store/two-factor.ts";

/** Where a member without two-factor is sent: the page that sets it up. */
const SETUP = "/account/two-factor";
/**
 * What such a member may still open: the setup (the page, its password step, the QR code, the confirming code; a
 * passkey's options and its registration), signing out, acting for another of their organisations (which may not require it), the static files.
 */
const OPEN_PATHS =
  /^\/(?:account\/two-factor|account\/two-factor\/(?:setup|confirm|passkeys|passkeys\/new)|sign-out|team\/switch|static\/[^/]+|favicon\.ico)$/;

/** Whether the session acts for an organisation that requires two-factor sign-in, of a member who has none. */
export async function missingSecondFactor(c: PortalContext, portal: Portal): Promise<boolean> {
  const account = c.get("account");
  if (!account || !c.get("org")?.requiresTwoFactor) return false;
  return !(await hasSecondFactor(portal.db, account.id));
}

/** Middleware (after the sessions'): the gate above. A GET is answered 302, anything else 303 (and not performed). */
export function useTwoFactorRequirement(app: Hono<PortalEnv>, portal: Portal): void {
  app.use(async (c, next) => {
    if (OPEN_PATHS.test(c.req.path) || !(await missingSecondFactor(c, portal))) return next();
    return c.redirect(SETUP, c.req.method === "GET" || c.req.method === "HEAD" ? 302 : 303);
  });
}
