// The developer portal as a Hono app: security headers, sessions and CSRF checks around the routes of each part.
import { errorLine } from "../errors.ts";
import type { IncomingMessage } from "node:http";
import { Hono } from "hono";
import { KeysUnavailableError } from "../keys/keys-store.ts";
import { createExactClientAddress } from "../serve/admission/client-address.ts";
import { bodyLimit } from "hono/body-limit";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { secureHeaders } from "hono/secure-headers";
import { timingSafeEqual } from "node:crypto";
import { html } from "hono/html";
import { registerAccountRoutes } from "./account-routes.ts";
import { consoleSource, registerConsoleRoutes } from "./console-routes.ts";
import { HashingBusyError } from "./hash-pool.ts";
import type { Portal, PortalEnv, PortalOptions } from "./context.ts";
import { pageContext, render } from "./context.ts";
import { registerKeyRoutes } from "./key-routes.ts";
import { DEFAULT_MAIL_LIMITS } from "./mail-limits.ts";
import { registerOperatorRoutes } from "./operator-routes.ts";
import { registerOrgSettingsRoutes } from "./org-settings-routes.ts";
import { registerPasskeyRoutes } from "./passkey-routes.ts";
import { registerPasskeySignInRoutes } from "./passkey-signin-routes.ts";
import { registerResetRoutes } from "./reset-routes.ts";
import { registerCodeStepRoutes, useCodeStepGate } from "./signin-code-routes.ts";
import { registerSignInRoutes } from "./signin-routes.ts";
import { registerSignUpRoutes } from "./signup-routes.ts";
import { registerTwoFactorRoutes } from "./two-factor-routes.ts";
import { useTwoFactorRequirement } from "./two-factor-requirement.ts";
import { registerTeamRoutes } from "./team-routes.ts";
import { registerUsageRoutes } from "./usage-routes.ts";
import { registerWebhookRoutes } from "./webhook-routes.ts";
import { DEFAULT_KEYS_PER_ACCOUNT } from "../config/defaults.ts";
import { cookiesAreSecure, csrfToken, preSessionSecret, readSessionCookie } from "./session-cookies.ts";
import { FAVICON } from "./favicon.ts";
import { PASSKEYS_JS, WEBAUTHN_JS } from "./passkey-static.ts";
import { PORTAL_CSS, PORTAL_JS } from "./static-files.ts";
import { findAccount } from "./store/accounts.ts";
import { findMembership } from "./store/organisations.ts";
import { DEFAULT_SESSION_LIMITS, endSession, resumeSession } from "./store/sessions.ts";
import { DEFAULT_THROTTLE } from "./store/throttle.ts";
import { page } from "./views/layout.ts";

/** The largest form body accepted, bytes. */
const MAX_BODY = 16 * 1024;

/** Nothing from another host, no inline script or style, no framing, forms only to the portal (but see useSecurityHeaders). */
const CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
};

const sameBytes = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Makes the portal's request handler (`app.fetch`) from its options. */
export function createPortalApp(options: PortalOptions): Hono<PortalEnv> {
  const portal: Portal = {
    clock: Date.now,
    keyLimit: DEFAULT_KEYS_PER_ACCOUNT,
    approval: "auto",
    throttle: DEFAULT_THROTTLE,
    mailLimits: DEFAULT_MAIL_LIMITS,
    sessionLimits: DEFAULT_SESSION_LIMITS,
    log: () => {},
    trustProxy: [],
    secretKey: null,
    webhooks: null,
    ...options,
  };
  const app = new Hono<PortalEnv>();
  useClientAddress(app, portal);
  useSecurityHeaders(app, portal);
  app.get("/static/portal.css", (c) => c.body(PORTAL_CSS, 200, { "Content-Type": "text/css; charset=utf-8" }));
  app.get("/static/portal.js", (c) => c.body(PORTAL_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));
  app.get("/static/webauthn.js", (c) => c.body(WEBAUTHN_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));
  app.get("/static/passkeys.js", (c) => c.body(PASSKEYS_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));
  app.get("/favicon.ico", (c) => c.body(FAVICON, 200, { "Content-Type": "image/x-icon" }));
  useSessions(app, portal);
  useCodeStepGate(app, portal);
  useTwoFactorRequirement(app, portal);
  useCsrfChecks(app, portal);

  app.get("/", (c) => {
    const role = c.get("org")?.role;
    return c.redirect(!c.get("account") ? "/sign-in" : role === "viewer" ? "/usage" : role ? "/keys" : "/team", 303);
  });
  registerSignUpRoutes(app, portal);
  registerSignInRoutes(app, portal);
  registerCodeStepRoutes(app, portal);
  registerPasskeySignInRoutes(app, portal);
  registerResetRoutes(app, portal);
  registerKeyRoutes(app, portal);
  registerAccountRoutes(app, portal);
  registerTwoFactorRoutes(app, portal);
  registerPasskeyRoutes(app, portal);
  registerTeamRoutes(app, portal);
  registerOrgSettingsRoutes(app, portal);
  registerOperatorRoutes(app, portal);
  registerUsageRoutes(app, portal);
  registerWebhookRoutes(app, portal);
  registerConsoleRoutes(app, portal);
  registerErrorPages(app, portal);
  return app;
}

/** Who the client is: the peer, or the address a trusted proxy names (node-server's binding holds the request). */
function useClientAddress(app: Hono<PortalEnv>, portal: Portal): void {
  const resolveClient = createExactClientAddress(portal.trustProxy);
  app.use(async (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    c.set("client", incoming ? resolveClient(incoming) : "");
    await next();
  });
}

/**
 * The security headers (the CSP above among them, the console's page also reaching the API); Cache-Control: static
 * files and the icon 5 minutes, other answers no-store.
 */
function useSecurityHeaders(app: Hono<PortalEnv>, portal: Portal): void {
  const toApi = consoleSource(portal.apiUrl);
  const csp = { ...CSP, connectSrc: ["'self'", toApi], formAction: ["'self'", toApi] };
  app.use(secureHeaders({ contentSecurityPolicy: csp, crossOriginEmbedderPolicy: true }));
  app.use(async (c, next) => {
    await next();
    const asset = c.req.path.startsWith("/static/") || c.req.path === "/favicon.ico";
    c.header("Cache-Control", asset ? "public, max-age=300" : "no-store");
  });
}

/**
 * Who is signed in, for which organisation, and the CSRF token their forms carry. A session whose account is no longer
 * a member of its organisation (removed) is ended there and then: its next request is signed out.
 */
function useSessions(app: Hono<PortalEnv>, portal: Portal): void {
  app.use(async (c, next) => {
    const secure = cookiesAreSecure(portal.publicUrl(), c.req.url);
    c.set("secureCookies", secure);
    const sessionId = readSessionCookie(c, secure);
    let account = null;
    let org = null;
    if (sessionId && /^[A-Za-z0-9_-]{43}$/.test(sessionId)) {
      const session = await resumeSession(portal.db, sessionId, portal.clock(), portal.sessionLimits);
      account = session ? await findAccount(portal.db, session.accountId) : null;
      if (account?.status !== "active") account = null; // suspended or awaiting approval: signed out
      if (account && session?.orgId) {
        org = await findMembership(portal.db, session.orgId, account.id);
        // The organisation's founding account (whose ID it has) suspended by an operator: its members are signed out.
        const founder = org && org.id !== account.id ? await findAccount(portal.db, org.id) : null;
        if (!org || (founder && founder.status !== "active")) {
          if (!org) await endSession(portal.db, sessionId);
          [account, org] = [null, null];
        }
      }
    }
    c.set("account", account);
    c.set("org", org);
    c.set("sessionId", account ? sessionId! : null);
    c.set("csrf", csrfToken(account ? sessionId! : preSessionSecret(c, secure)));
    await next();
  });
}

/** Every request that can change anything: a body of bounded size, from a page of the portal, with the token. */
function useCsrfChecks(app: Hono<PortalEnv>, portal: Portal): void {
  const publicOrigin = () => new URL(portal.publicUrl()).origin;
  app.use(bodyLimit({ maxSize: MAX_BODY, onError: (c) => c.text("Form too large", 413) }));
  app.use(csrf({ origin: (origin, c) => origin === publicOrigin() || origin === new URL(c.req.url).origin }));
  app.use(async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const body = await c.req.parseBody();
    const sent = typeof body._csrf === "string" ? body._csrf : "";
    if (!sameBytes(sent, c.get("csrf")))
      return render(
        c,
        portal,
        403,
        "Form expired",
        html`<p>This form was out of date or not sent by the portal. Go back, reload the page and try again.</p>`,
      );
    return next();
  });
}

/** The pages for no such page, a busy password hashing pool, keys that cannot be changed now and any other error. */
function registerErrorPages(app: Hono<PortalEnv>, portal: Portal): void {
  app.notFound((c) =>
    render(c, portal, 404, "Not found", html`<p>There is no such page here. <a href="/">Start again</a>.</p>`),
  );
  app.onError(async (err, c) => {
    if (err instanceof HTTPException) return err.getResponse();
    // More passwords to hash at once than the pool holds (passwords.ts): the request changed nothing; try again.
    if (err instanceof HashingBusyError) {
      c.header("Retry-After", String(err.retryAfter));
      const body = html`<p role="alert">Too many people are signing in right now. Please try again in a moment.</p>`;
      return c.html(await page(pageContext(c, portal), "Busy", body), 503);
    }
    const at = portal.clock();
    portal.log(JSON.stringify(errorLine("error", "portal_error", err, { at, method: c.req.method, path: c.req.path })));
    // The keys are kept in Redis (KEYS_SYNC=shared), which does not answer: the partner is told what to do.
    if (err instanceof KeysUnavailableError) {
      c.header("Retry-After", "60");
      const body = html`<p role="alert">
        Your keys cannot be changed at the moment: the service that shares them with our API servers does not answer.
        Your change was not made. Please try again in a few minutes.
      </p>`;
      return c.html(await page(pageContext(c, portal), "Keys cannot be changed now", body), 503);
    }
    return c.html("<!doctype html><title>Error</title><p>Something went wrong on our side. Please try again.</p>", 500);
  });
}
