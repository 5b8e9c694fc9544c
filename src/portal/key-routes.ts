// The API key dashboard's routes: list, create, rotate, revoke, for an organisation's owners and developers (a viewer
// is answered 403, and sent to the usage pages from the list); a key ID not of the session's organisation is a 404. A new
// key is shown by POST, redirect, GET: the form's answer is a 303 to a page that shows the key once (key-reveals.ts),
// so a reload shows that page again, which says the key was shown, and makes nothing.
import type { Hono } from "hono";
import { html } from "hono/html";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { accountOf, clientAddress, formOf, orgOf, pageContext, render, renderTooMany, requireRole } from "./context.ts";
import { GRACE_PERIODS, KeyNameSchema, RotateSchema, parseForm } from "./forms.ts";
import { openReveal, recordReveal } from "./key-reveals.ts";
import {
  KeyLimitError,
  createPartnerKey,
  listPartnerKeys,
  revokePartnerKey,
  rotatePartnerKey,
  takeKeyChange,
} from "./partner-keys.ts";
import { organisationRecipients, recordSecurityEvent } from "./security-mail.ts";
import type { SecurityEvent } from "./security-mail.ts";
import { findAccount } from "./store/accounts.ts";
import { keysUse } from "./usage-reads.ts";
import { dashboard, keyAlreadyShown, keyShown, revokeForm, rotateForm } from "./views/key-pages.ts";

const notFound = html`<p>You have no such key. <a href="/keys">Your keys</a>.</p>`;
const tooMany = (minutes: number) =>
  html`<p>
    You have made or rotated as many keys as an account may in an hour. Try again in ${minutes}
    minute${minutes === 1 ? "" : "s"}. <a href="/keys">Your keys</a>.
  </p>`;

/** The organisation's keys. */
const keysOf = (portal: Portal, c: PortalContext) =>
  listPartnerKeys(portal.db, portal.keysFile, orgOf(c).id, portal.clock());

/** The organisation's live key named in the path, or undefined. */
const liveKey = async (portal: Portal, c: PortalContext) =>
  (await keysOf(portal, c)).find((k) => k.id === c.req.param("id") && k.status === "active");

/** The dashboard with the account's keys and their last use. */
const showDashboard = async (
  portal: Portal,
  c: PortalContext,
  status: 200 | 400 | 409,
  form: Parameters<typeof dashboard>[4],
) => {
  const keys = await keysOf(portal, c);
  const use = await keysUse(portal.db, keys, portal.clock());
  return render(c, portal, status, "API keys", dashboard(pageContext(c, portal), keys, use, portal.keyLimit, form));
};

/**
 * Records a change to a key on the organisation's trail, by the signed-in member, and mails the organisation's
 * owners and that member (security-mail.ts).
 */
const notify = async (portal: Portal, c: PortalContext, what: SecurityEvent, detail: string) =>
  recordSecurityEvent(portal, {
    accountId: orgOf(c).id,
    recipients: await organisationRecipients(portal.db, orgOf(c).id, accountOf(c)),
    at: portal.clock(),
    address: clientAddress(c),
    actor: accountOf(c).email,
    detail,
    what,
  });

/** Takes a creation or rotation from the organisation's hourly limit: the refusal page, or null when taken. */
const limited = async (portal: Portal, c: PortalContext, title: string) => {
  const wait = await takeKeyChange(portal.db, orgOf(c).id, portal.keyLimit, portal.clock());
  return wait > 0 ? renderTooMany(c, portal, wait, title, tooMany(Math.ceil(wait / 60))) : null;
};

/** Records the new key for this session to see once, and redirects to the page that shows it. */
const reveal = async (portal: Portal, c: PortalContext, keyId: string, key: string, intro: string) => {
  const made = { accountId: accountOf(c).id, keyId, key, intro };
  const id = await recordReveal(portal.db, c.get("sessionId")!, made, portal.clock());
  return c.redirect(`/keys/new/${id}`, 303);
};

/** Adds the key dashboard's routes to `app`. */
export function registerKeyRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const keyRoles = requireRole(portal, "owner", "developer");
  app.use("/keys", async (c: PortalContext, next: () => Promise<void>) =>
    c.req.method === "GET" && c.get("org")?.role === "viewer" ? c.redirect("/usage", 303) : keyRoles(c, next),
  );
  // A key's usage pages are every member's (usage-routes.ts); the rest is the keys'.
  app.use("/keys/*", async (c: PortalContext, next: () => Promise<void>) =>
    /^\/keys\/[^/]+\/usage(\.csv)?$/.test(c.req.path) ? next() : keyRoles(c, next),
  );
  registerDashboard(app, portal);
  registerReveal(app, portal);
  registerRotation(app, portal);
  registerRevocation(app, portal);
}

/** The dashboard, and the creation of a key from its form. */
function registerDashboard(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/keys", async (c) => {
    const message = c.req.query("verified")
      ? "Your email address is confirmed."
      : c.req.query("revoked")
        ? "The key was revoked."
        : undefined;
    return showDashboard(portal, c, 200, { message });
  });

  app.post("/keys", async (c) => {
    const body = await formOf(c);
    const values = { name: typeof body.name === "string" ? body.name : "" };
    const form = parseForm(KeyNameSchema, body);
    const again = (status: 400 | 409, errors: Record<string, string | undefined>) =>
      showDashboard(portal, c, status, { values, errors });
    if (!form.ok) return again(400, form.errors);
    const refused = await limited(portal, c, "API keys");
    if (refused) return refused;
    let made;
    try {
      // The organisation's founding account holds the rate and burst an operator set for its keys.
      const founder = await findAccount(portal.db, orgOf(c).id);
      const org = { id: orgOf(c).id, rate: founder?.rate ?? null, burst: founder?.burst ?? null };
      made = await createPartnerKey(
        portal.db,
        portal.keysFile,
        org,
        form.data.name,
        portal.keyLimit,
        portal.clock(),
        accountOf(c).id,
      );
    } catch (err) {
      if (err instanceof KeyLimitError)
        return again(409, {
          name: `You have ${portal.keyLimit} keys, the most an account may have: revoke one first.`,
        });
      throw err;
    }
    const key = { label: form.data.name, first4: made.key.slice(0, 4), last4: made.key.slice(-4) };
    await notify(portal, c, { event: "key.created", key }, `"${key.label}" (${key.first4}…${key.last4})`);
    return reveal(portal, c, made.id, made.key, "Your key is ready.");
  });
}

/** The page that shows a new key once (and after that, that it was shown). */
function registerReveal(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/keys/new/:reveal", async (c) => {
    const id = c.req.param("reveal");
    const shown = /^[a-z0-9]{20}$/.test(id)
      ? await openReveal(portal.db, c.get("sessionId")!, accountOf(c).id, id, portal.clock())
      : null;
    if (!shown) return render(c, portal, 404, "Not found", notFound);
    if ("key" in shown)
      return render(
        c,
        portal,
        200,
        "Your new key",
        keyShown(pageContext(c, portal), shown.label, shown.key, shown.intro),
      );
    return render(c, portal, 200, "Key already shown", keyAlreadyShown(shown.label, shown.shown));
  });
}

/** A key's rotation: its form, and a new key with the old one kept for the grace period chosen. */
function registerRotation(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/keys/:id/rotate", async (c) => {
    const key = await liveKey(portal, c);
    if (!key) return render(c, portal, 404, "Not found", notFound);
    return render(c, portal, 200, "Rotate a key", rotateForm(pageContext(c, portal), key));
  });
  app.post("/keys/:id/rotate", async (c) => {
    const key = await liveKey(portal, c);
    if (!key) return render(c, portal, 404, "Not found", notFound);
    const form = parseForm(RotateSchema, await formOf(c));
    if (!form.ok)
      return render(c, portal, 400, "Rotate a key", rotateForm(pageContext(c, portal), key, form.errors.grace));
    const refused = await limited(portal, c, "Rotate a key");
    if (refused) return refused;
    const made = await rotatePartnerKey(
      portal.db,
      portal.keysFile,
      orgOf(c).id,
      key.id,
      GRACE_PERIODS[form.data.grace],
      portal.clock(),
    );
    if (!made) return render(c, portal, 404, "Not found", notFound);
    const next = { first4: made.slice(0, 4), last4: made.slice(-4) };
    const graceMs = GRACE_PERIODS[form.data.grace];
    await notify(
      portal,
      c,
      { event: "key.rotated", key, next, graceUntil: graceMs ? portal.clock() + graceMs : null },
      `"${key.label}" (${key.first4}…${key.last4} -> ${next.first4}…${next.last4}, old key for ${form.data.grace})`,
    );
    const intro =
      form.data.grace === "now"
        ? "The key is replaced; the old one is refused now."
        : `The key is replaced; the old one works for ${form.data.grace
            .replace("h", " hours")
            .replace("d", " days")
            .replace(/^1 hours/, "1 hour")}.`;
    return reveal(portal, c, key.id, made, intro);
  });
}

/** A key's revocation: its confirmation form, and the revocation. */
function registerRevocation(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/keys/:id/revoke", async (c) => {
    const key = await liveKey(portal, c);
    if (!key) return render(c, portal, 404, "Not found", notFound);
    return render(c, portal, 200, "Revoke a key", revokeForm(pageContext(c, portal), key));
  });
  app.post("/keys/:id/revoke", async (c) => {
    const key = await liveKey(portal, c);
    if (!key || !(await revokePartnerKey(portal.db, portal.keysFile, orgOf(c).id, key.id, portal.clock())))
      return render(c, portal, 404, "Not found", notFound);
    await notify(portal, c, { event: "key.revoked", key }, `"${key.label}" (${key.first4}…${key.last4})`);
    return c.redirect("/keys?revoked=1", 303);
  });
}
