// The API key dashboard's routes: list, create, rotate, revoke; a key ID not of the signed-in account is a 404.
import type { Hono } from "hono";
import { html } from "hono/html";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { accountOf, clientAddress, formOf, pageContext, render, requireAccount } from "./context.ts";
import { GRACE_PERIODS, KeyNameSchema, RotateSchema, parseForm } from "./forms.ts";
import {
  KeyLimitError,
  createPartnerKey,
  listPartnerKeys,
  revokePartnerKey,
  rotatePartnerKey,
} from "./partner-keys.ts";
import { recordAudit } from "./store/audit.ts";
import { keysUse } from "./usage-reads.ts";
import { dashboard, keyShown, revokeForm, rotateForm } from "./views/key-pages.ts";

const notFound = html`<p>You have no such key. <a href="/keys">Your keys</a>.</p>`;

/** Adds the key dashboard's routes to `app`. */
export function registerKeyRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const ctx = (c: PortalContext) => pageContext(c, portal);
  const keysOf = (c: PortalContext) => listPartnerKeys(portal.db, portal.keysFile, accountOf(c).id, portal.clock());
  /** The signed-in account's live key named in the path, or undefined. */
  const liveKey = async (c: PortalContext) =>
    (await keysOf(c)).find((k) => k.id === c.req.param("id") && k.status === "active");
  /** The dashboard with the account's keys and their last use. */
  const showDashboard = async (c: PortalContext, status: 200 | 400 | 409, form: Parameters<typeof dashboard>[4]) => {
    const keys = await keysOf(c);
    const use = await keysUse(portal.db, keys, portal.clock());
    return render(c, portal, status, "API keys", dashboard(ctx(c), keys, use, portal.keyLimit, form));
  };
  const audit = (c: PortalContext, event: "key.created" | "key.rotated" | "key.revoked", detail: string) =>
    recordAudit(portal.db, accountOf(c).id, { at: portal.clock(), event, detail, address: clientAddress(c) });

  app.use("/keys", requireAccount);
  app.use("/keys/*", requireAccount);

  app.get("/keys", async (c) => {
    const message = c.req.query("verified")
      ? "Your email address is confirmed."
      : c.req.query("revoked")
        ? "The key was revoked."
        : undefined;
    return showDashboard(c, 200, { message });
  });

  app.post("/keys", async (c) => {
    const body = await formOf(c);
    const values = { name: typeof body.name === "string" ? body.name : "" };
    const form = parseForm(KeyNameSchema, body);
    const again = (status: 400 | 409, errors: Record<string, string | undefined>) =>
      showDashboard(c, status, { values, errors });
    if (!form.ok) return again(400, form.errors);
    let made;
    try {
      made = await createPartnerKey(
        portal.db,
        portal.keysFile,
        accountOf(c),
        form.data.name,
        portal.keyLimit,
        portal.clock(),
      );
    } catch (err) {
      if (err instanceof KeyLimitError)
        return again(409, {
          name: `You have ${portal.keyLimit} keys, the most an account may have: revoke one first.`,
        });
      throw err;
    }
    await audit(c, "key.created", `"${form.data.name}" (${made.key.slice(0, 4)}…${made.key.slice(-4)})`);
    return render(c, portal, 200, "Your new key", keyShown(ctx(c), form.data.name, made.key, "Your key is ready."));
  });

  app.get("/keys/:id/rotate", async (c) => {
    const key = await liveKey(c);
    if (!key) return render(c, portal, 404, "Not found", notFound);
    return render(c, portal, 200, "Rotate a key", rotateForm(ctx(c), key));
  });
  app.post("/keys/:id/rotate", async (c) => {
    const key = await liveKey(c);
    if (!key) return render(c, portal, 404, "Not found", notFound);
    const form = parseForm(RotateSchema, await formOf(c));
    if (!form.ok) return render(c, portal, 400, "Rotate a key", rotateForm(ctx(c), key, form.errors.grace));
    const made = await rotatePartnerKey(
      portal.db,
      portal.keysFile,
      accountOf(c).id,
      key.id,
      GRACE_PERIODS[form.data.grace],
      portal.clock(),
    );
    if (!made) return render(c, portal, 404, "Not found", notFound);
    await audit(
      c,
      "key.rotated",
      `"${key.label}" (${key.first4}…${key.last4} -> ${made.slice(0, 4)}…${made.slice(-4)}, old key for ${form.data.grace})`,
    );
    const intro =
      form.data.grace === "now"
        ? "The key is replaced; the old one is refused now."
        : `The key is replaced; the old one works for ${form.data.grace
            .replace("h", " hours")
            .replace("d", " days")
            .replace(/^1 hours/, "1 hour")}.`;
    return render(c, portal, 200, "Your new key", keyShown(ctx(c), key.label, made, intro));
  });

  app.get("/keys/:id/revoke", async (c) => {
    const key = await liveKey(c);
    if (!key) return render(c, portal, 404, "Not found", notFound);
    return render(c, portal, 200, "Revoke a key", revokeForm(ctx(c), key));
  });
  app.post("/keys/:id/revoke", async (c) => {
    const key = await liveKey(c);
    if (!key || !(await revokePartnerKey(portal.db, portal.keysFile, accountOf(c).id, key.id, portal.clock())))
      return render(c, portal, 404, "Not found", notFound);
    await audit(c, "key.revoked", `"${key.label}" (${key.first4}…${key.last4})`);
    return c.redirect("/keys?revoked=1", 303);
  });
}
