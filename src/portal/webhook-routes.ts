// The webhooks pages' routes: every member of an organisation sees its endpoints and their delivery logs; owners and
// developers add, rotate, disable, enable, delete, test, retry and replay (a viewer's POST is answered 403). An
// endpoint ID not of the session's organisation is a 404. A new secret is shown once, by POST, redirect, GET: the form
// records it for the session (webhooks/secret-reveals.ts) and answers 303 to the endpoint's page, which shows it once;
// a reload shows the page without it, and makes nothing again.
import type { Hono } from "hono";
import type { Queries } from "../db/database.ts";
import { html } from "hono/html";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { accountOf, clientAddress, formOf, orgOf, pageContext, render, requireRole } from "./context.ts";
import { GRACE_PERIODS, RotateSchema, parseForm } from "./forms.ts";
import { readLog, replayEvents, retryNow } from "./webhooks/attempts.ts";
import { parseEndpointForm, parseRange } from "./webhooks/endpoint-form.ts";
import {
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  newEndpointId,
  rotateEndpointSecret,
  setEndpointEnabled,
} from "./webhooks/endpoints.ts";
import type { Endpoint } from "./webhooks/endpoints.ts";
import { queueTestEvent } from "./webhooks/queue.ts";
import { recordSecretReveal, takeSecretReveal } from "./webhooks/secret-reveals.ts";
import type { SecretReveal } from "./webhooks/secret-reveals.ts";
import { newWebhookSecret, sealWebhookSecret } from "./webhooks/signing.ts";
import { deleteForm, endpointPage, endpointsPage } from "./views/webhook-pages.ts";
import type { EndpointForm } from "./views/webhook-pages.ts";
import { randomId } from "./secrets.ts";
import { recordAudit } from "./store/audit.ts";
import type { AuditEvent } from "./store/audit.ts";

/** The most endpoints an organisation may have. */
const MAX_ENDPOINTS = 20;

const notFound = html`<p>You have no such endpoint. <a href="/webhooks">Your endpoints</a>.</p>`;
const manages = (c: PortalContext) => orgOf(c).role !== "viewer";

/** The list page, with the form as sent and its errors. */
const showList = async (portal: Portal, c: PortalContext, status: 200 | 400 | 409, form: EndpointForm = {}) => {
  const endpoints = await listEndpoints(portal.db, orgOf(c).id);
  const ready = portal.webhooks !== null && portal.secretKey !== null;
  const body = endpointsPage(pageContext(c, portal), endpoints, manages(c), ready, form);
  return render(c, portal, status, "Webhooks", body);
};

/** The endpoint's page, with a message, or with a new secret shown this once. */
const showEndpoint = async (
  portal: Portal,
  c: PortalContext,
  e: Endpoint,
  status: 200 | 400,
  message?: string,
  reveal?: SecretReveal,
) => {
  const log = await readLog(portal.db, e.id);
  const body = endpointPage(pageContext(c, portal), e, log, manages(c), portal.clock(), message, reveal);
  return render(c, portal, status, reveal ? "New signing secret" : "Webhook endpoint", body);
};

/** What the page says after an action redirected to it (POST, redirect, GET: a reload does not do it again). */
function doneMessage(done: string | undefined, n: number): string | undefined {
  if (done === "test") return "A test event is on its way.";
  if (done === "retry") return "The delivery is sent again now.";
  if (done === "busy") return "That delivery cannot be retried now (it is being sent, or was delivered).";
  if (done === "replay") return `${n} event${n === 1 ? "" : "s"} will be sent again.`;
  if (done === "secret")
    return "The signing secret was shown once, when it was made, and is not shown again. If it was not kept, rotate the secret for a new one.";
  return undefined;
}

/**
 * Makes `change` (false: it was not made) and records `secret` for this session to see once on endpoint `endpointId`'s
 * page, in one transaction.
 */
async function revealOnce(
  portal: Portal,
  c: PortalContext,
  endpointId: string,
  secret: string,
  intro: string,
  change: (tx: Queries) => Promise<boolean>,
): Promise<boolean> {
  return portal.db.transaction(async (tx) => {
    if (!(await change(tx))) return false;
    const at = portal.clock();
    await recordSecretReveal(tx, portal.secretKey!, c.get("sessionId")!, endpointId, { secret, intro }, at);
    return true;
  });
}

/** Records a change of endpoint `e` on the organisation's trail, by the signed-in member. */
const audit = (portal: Portal, c: PortalContext, event: AuditEvent, e: { url: string }, detail = "") =>
  recordAudit(portal.db, orgOf(c).id, {
    at: portal.clock(),
    event,
    detail: `${e.url}${detail}`,
    address: clientAddress(c),
    actor: accountOf(c).email,
  });

/** The organisation's endpoint named in the path, or null. */
const endpointOf = (portal: Portal, c: PortalContext) =>
  /^[a-z0-9]{16}$/.test(c.req.param("id") ?? "") ? findEndpoint(portal.db, orgOf(c).id, c.req.param("id")!) : null;

/** Adds the webhooks routes to `app`. */
export function registerWebhookRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const see = requireRole(portal, "owner", "developer", "viewer");
  const manage = requireRole(portal, "owner", "developer");
  for (const path of ["/webhooks", "/webhooks/*"])
    app.use(path, (c: PortalContext, next) => (c.req.method === "GET" ? see(c, next) : manage(c, next)));
  app.get("/webhooks", (c) => showList(portal, c, 200));
  app.post("/webhooks", (c) => addEndpoint(portal, c));
  app.get("/webhooks/:id", async (c) => {
    const e = await endpointOf(portal, c);
    if (!e) return render(c, portal, 404, "Not found", notFound);
    const done = c.req.query("done");
    const reveal =
      done === "secret" && portal.secretKey
        ? await takeSecretReveal(portal.db, portal.secretKey, c.get("sessionId")!, e.id, portal.clock())
        : null;
    if (reveal) return showEndpoint(portal, c, e, 200, undefined, reveal);
    return showEndpoint(portal, c, e, 200, doneMessage(done, Number(c.req.query("n") ?? 0)));
  });
  registerChanges(app, portal);
  registerLogActions(app, portal);
}

/** A new endpoint from the list's form: its secret shown once, on its page. */
async function addEndpoint(portal: Portal, c: PortalContext) {
  if (!portal.webhooks || !portal.secretKey) return showList(portal, c, 409);
  const body = await formOf(c);
  const text = (k: string) => (typeof body[k] === "string" ? body[k] : "");
  const values = { url: text("url"), stores: text("stores"), affid: text("affid"), types: Object.keys(body) };
  const form = await parseEndpointForm(portal.webhooks.guard, body);
  if (!form.ok) return showList(portal, c, 400, { values, errors: form.errors });
  if ((await listEndpoints(portal.db, orgOf(c).id)).length >= MAX_ENDPOINTS)
    return showList(portal, c, 409, { values, errors: { url: `An organisation may have ${MAX_ENDPOINTS} endpoints` } });
  const id = newEndpointId();
  const secret = newWebhookSecret();
  const made = {
    id,
    orgId: orgOf(c).id,
    ...form.data,
    secret: sealWebhookSecret(portal.secretKey, id, secret),
    created: portal.clock(),
    createdBy: accountOf(c).email,
  };
  // The endpoint and the secret's one showing are written together: never an endpoint whose secret nobody saw.
  await revealOnce(portal, c, id, secret, "The endpoint is added.", (tx) => insertEndpoint(tx, made).then(() => true));
  await audit(portal, c, "webhook.added", made);
  return c.redirect(`/webhooks/${id}?done=secret`, 303);
}

/** Rotation, disable, enable, delete. */
function registerChanges(app: Hono<PortalEnv>, portal: Portal): void {
  app.post("/webhooks/:id/rotate", async (c) => {
    const e = await endpointOf(portal, c);
    if (!e || !portal.secretKey) return render(c, portal, 404, "Not found", notFound);
    const form = parseForm(RotateSchema, await formOf(c));
    if (!form.ok) return showEndpoint(portal, c, e, 400, "Pick how long the current secret keeps signing.");
    const secret = newWebhookSecret();
    const graceMs = GRACE_PERIODS[form.data.grace];
    const sealed = sealWebhookSecret(portal.secretKey, e.id, secret);
    const intro = graceMs
      ? "The secret is replaced; the previous one signs too until the time you chose."
      : "The secret is replaced.";
    // The new secret and its one showing are written together: never a secret signing that nobody saw.
    const rotate = (tx: Queries) => rotateEndpointSecret(tx, e, sealed, graceMs ? portal.clock() + graceMs : 0);
    if (!(await revealOnce(portal, c, e.id, secret, intro, rotate)))
      return showEndpoint(portal, c, e, 400, "The secret was changed meanwhile: try again.");
    await audit(portal, c, "webhook.rotated", e, graceMs ? " (the previous secret signs too for a while)" : "");
    return c.redirect(`/webhooks/${e.id}?done=secret`, 303);
  });
  for (const [action, enabled] of [
    ["disable", false],
    ["enable", true],
  ] as const)
    app.post(`/webhooks/:id/${action}`, async (c) => {
      const e = await endpointOf(portal, c);
      if (!e) return render(c, portal, 404, "Not found", notFound);
      await setEndpointEnabled(portal.db, e.id, enabled, `disabled by ${accountOf(c).email}`);
      await audit(portal, c, enabled ? "webhook.enabled" : "webhook.disabled", e);
      if (enabled) portal.webhooks?.wake();
      return c.redirect(`/webhooks/${e.id}`, 303);
    });
  app.get("/webhooks/:id/delete", async (c) => {
    const e = await endpointOf(portal, c);
    if (!e) return render(c, portal, 404, "Not found", notFound);
    return render(c, portal, 200, "Delete an endpoint", deleteForm(pageContext(c, portal), e));
  });
  app.post("/webhooks/:id/delete", async (c) => {
    const e = await endpointOf(portal, c);
    if (!e) return render(c, portal, 404, "Not found", notFound);
    await deleteEndpoint(portal.db, e.id);
    await audit(portal, c, "webhook.deleted", e);
    return showList(portal, c, 200, { message: `The endpoint ${e.url} was deleted.` });
  });
}

/** A test event, a delivery tried again now, a range of events replayed. */
function registerLogActions(app: Hono<PortalEnv>, portal: Portal): void {
  app.post("/webhooks/:id/test", async (c) => {
    const e = await endpointOf(portal, c);
    if (!e) return render(c, portal, 404, "Not found", notFound);
    const now = portal.clock();
    const data = JSON.stringify({ test: true, endpoint: e.url, sent: new Date(now).toISOString() });
    await queueTestEvent(portal.db, e.id, { id: `test.${randomId(16)}`, type: "webhook.test", data }, now);
    portal.webhooks?.wake();
    return c.redirect(`/webhooks/${e.id}?done=test`, 303);
  });
  app.post("/webhooks/:id/deliveries/:delivery/retry", async (c) => {
    const e = await endpointOf(portal, c);
    if (!e) return render(c, portal, 404, "Not found", notFound);
    const done = await retryNow(portal.db, e.id, c.req.param("delivery"), portal.clock());
    portal.webhooks?.wake();
    return c.redirect(`/webhooks/${e.id}?done=${done ? "retry" : "busy"}`, 303);
  });
  app.post("/webhooks/:id/replay", async (c) => {
    const e = await endpointOf(portal, c);
    if (!e) return render(c, portal, 404, "Not found", notFound);
    const range = parseRange(await formOf(c));
    if ("error" in range) return showEndpoint(portal, c, e, 400, range.error);
    const n = await replayEvents(portal.db, e, range.from, range.to, portal.clock());
    portal.webhooks?.wake();
    return c.redirect(`/webhooks/${e.id}?done=replay&n=${n}`, 303);
  });
}
