// What every route of the portal shares: its options, the per-request variables, and the helpers that read them.
import type { Context } from "hono";
import { clientKey } from "../serve/admission/client-address.ts";
import type { PortalDatabase } from "../db/database.ts";
import type { Mailer } from "./mailer.ts";
import type { AddressGuard } from "./webhooks/address-guard.ts";
import type { Account } from "./store/accounts.ts";
import type { MemberRole, Membership } from "./store/organisations.ts";
import type { SessionLimits } from "./store/sessions.ts";
import type { ThrottleRule } from "./store/throttle.ts";
import type { Html, PageContext } from "./views/layout.ts";
import { page } from "./views/layout.ts";
import { html } from "hono/html";

/** Everything the portal is made from. */
export interface PortalOptions {
  db: PortalDatabase;
  /** The API keys file the API servers read (src/keys/keys-file.ts). */
  keysFile: string;
  mailer: Mailer;
  /** The API's base URL, for the curl line and the /docs link. */
  apiUrl: string;
  /** The portal's public URL (links in mails; an accepted Origin); https makes every cookie Secure. */
  publicUrl: () => string;
  /** The time, ms since the epoch. Default Date.now. */
  clock?: () => number;
  /** Live keys an account may have. Default DEFAULT_KEYS_PER_ACCOUNT (10). */
  keyLimit?: number;
  /** `manual`: a new account waits for an operator's approval before it can sign in. Default `auto`. */
  approval?: "auto" | "manual";
  /** Sign-in limits. Default DEFAULT_THROTTLE. */
  throttle?: { account: ThrottleRule; address: ThrottleRule };
  /** Limits on the mail requests send (verification, reset, a new email). Default DEFAULT_MAIL_LIMITS. */
  mailLimits?: { recipient: ThrottleRule; address: ThrottleRule };
  /** Session expiry. Default DEFAULT_SESSION_LIMITS. */
  sessionLimits?: SessionLimits;
  /** Where error lines go (the CLI: stderr). Default: nowhere. Never given a password, session ID, key or token. */
  log?: (line: string) => void;
  /**
   * Proxies whose X-Forwarded-For names the client (TRUST_PROXY: addresses and CIDR networks), for the sign-in and
   * mail limits and the audit trail; from any other peer the header is ignored. Default none: the peer is the client.
   */
  trustProxy?: readonly string[];
  /**
   * The portal's secret key (PORTAL_SECRET_KEY, 32 bytes), which seals each account's TOTP secret in the database.
   * Default null: two-factor sign-in cannot be set up, and TOTP codes cannot be checked (recovery codes still can).
   */
  secretKey?: Buffer | null;
  /**
   * Webhooks (src/portal/webhooks/): the address guard new endpoints' URLs are checked with, and the sender's wake-up.
   * Default null: the pages say webhooks are not set up, and no endpoint can be added.
   */
  webhooks?: { guard: AddressGuard; wake(): void } | null;
}

/** The options with every default filled in. */
export type Portal = Required<PortalOptions>;

/** Hono's environment for the portal: what the middleware sets for the routes. */
export interface PortalEnv {
  Variables: {
    account: Account | null;
    /** The organisation the session acts for, and the account's role in it; null when it is a member of none. */
    org: Membership | null;
    sessionId: string | null;
    csrf: string;
    /** Whether cookies carry Secure and the __Host- prefix on this request. */
    secureCookies: boolean;
    /** The client's address: the peer, or from a trusted proxy the address it names. */
    client: string;
  };
}
export type PortalContext = Context<PortalEnv>;

/** The client's address, as the audit trail and the sign-in and mail limits know it (see PortalOptions.trustProxy). */
export function clientAddress(c: PortalContext): string {
  return c.get("client") || "unknown";
}

/**
 * The client as the limits count it: its address, an IPv6 client by its /64 (the API's clientKey), since one host or
 * home network is given a whole /64 and picks any address in it. The audit trail keeps the address itself.
 */
export function limitAddress(c: PortalContext): string {
  return clientKey(clientAddress(c));
}

/** The page frame's view of the request. */
export function pageContext(c: PortalContext, portal: Portal): PageContext {
  const account = c.get("account");
  return {
    account: account
      ? {
          email: account.email,
          partner: account.partner,
          operator: account.role === "admin",
          role: c.get("org")?.role ?? null,
        }
      : null,
    csrf: c.get("csrf"),
    apiUrl: portal.apiUrl,
  };
}

/** Answers a whole page with `status`. */
export async function render(
  c: PortalContext,
  portal: Portal,
  status: 200 | 400 | 401 | 403 | 404 | 409 | 429,
  title: string,
  body: Html,
) {
  return c.html(await page(pageContext(c, portal), title, body), status);
}

/** Answers a page with 429 and `Retry-After: wait`. */
export async function renderTooMany(c: PortalContext, portal: Portal, wait: number, title: string, body: Html) {
  c.header("Retry-After", String(wait));
  return render(c, portal, 429, title, body);
}

/** The signed-in account; routes behind requireAccount only. */
export function accountOf(c: PortalContext): Account {
  const account = c.get("account");
  if (!account) throw new Error("no account: the route is missing requireAccount");
  return account;
}

/** The organisation the signed-in account acts for; routes behind requireRole only. */
export function orgOf(c: PortalContext): Membership {
  const org = c.get("org");
  if (!org) throw new Error("no organisation: the route is missing requireRole");
  return org;
}

const noTeam = html`<p>
  You are not a member of any organisation now. Ask an owner of your team to invite you again, or delete this account on
  <a href="/account">its page</a>.
</p>`;
const notYourRole = html`<p>Your role in this organisation does not allow this. <a href="/">Start again</a>.</p>`;

/**
 * Middleware for the pages of an organisation: a signed-in member whose role is one of `roles` (anyone else signed in
 * is answered 403, and nothing is done; no one signed in is sent to sign in).
 */
export const requireRole =
  (portal: Portal, ...roles: MemberRole[]) =>
  async (c: PortalContext, next: () => Promise<void>) => {
    if (!c.get("account")) return c.redirect("/sign-in", 303);
    const org = c.get("org");
    if (!org) return render(c, portal, 403, "No organisation", noTeam);
    if (!roles.includes(org.role)) return render(c, portal, 403, "Not allowed", notYourRole);
    await next();
  };

/** Middleware for the operator pages: a 404 to anyone but an operator (they do not learn the pages exist). */
export const requireOperator = async (c: PortalContext, next: () => Promise<void>) => {
  if (c.get("account")?.role !== "admin") return c.notFound();
  await next();
};

/** Middleware for pages that need a signed-in account: anyone else is sent to sign in. */
export const requireAccount = async (c: PortalContext, next: () => Promise<void>) => {
  if (!c.get("account")) return c.redirect("/sign-in", 303);
  await next();
};

/** The submitted form's fields (Hono parses the body once; the CSRF check already did). */
export async function formOf(c: PortalContext): Promise<Record<string, unknown>> {
  return c.req.parseBody();
}

/** A text field of the submitted form ("" when absent or not text). */
export async function fieldOf(c: PortalContext, name: string): Promise<string> {
  const value = (await formOf(c))[name];
  return typeof value === "string" ? value : "";
}
