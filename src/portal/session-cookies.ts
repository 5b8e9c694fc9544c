// The portal's two cookies (the session, and the pre-session CSRF secret) and the CSRF token derived from them.
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { PortalContext } from "./context.ts";
import { hashSecret, randomToken } from "./secrets.ts";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Whether cookies get Secure and the `__Host-` prefix: when the portal's public URL or the request is https, and on
 * plain http to a loopback host (Chromium and Firefox treat http://localhost and http://127.0.0.1 as secure and keep
 * Secure cookies from them; checked with Chromium 156). Only plain http to another host (a LAN address, say) gets
 * cookies without Secure, named without the prefix, since browsers refuse a `__Host-` cookie without Secure.
 */
export function cookiesAreSecure(publicUrl: string, requestUrl: string): boolean {
  const request = new URL(requestUrl);
  return publicUrl.startsWith("https:") || request.protocol === "https:" || LOOPBACK.has(request.hostname);
}

const names = (secure: boolean) =>
  secure ? { session: "__Host-session", csrf: "__Host-csrf" } : { session: "portal-session", csrf: "portal-csrf" };

const options = (secure: boolean) => ({ httpOnly: true, sameSite: "Lax" as const, path: "/", secure });

/** The session ID from the request's cookie, if any. */
export function readSessionCookie(c: PortalContext, secure: boolean): string | undefined {
  return getCookie(c, names(secure).session);
}

/** Sets the session cookie (a browser-session cookie: the server decides expiry). */
export function writeSessionCookie(c: PortalContext, secure: boolean, id: string): void {
  setCookie(c, names(secure).session, id, options(secure));
}

/** Removes the session cookie. */
export function clearSessionCookie(c: PortalContext, secure: boolean): void {
  deleteCookie(c, names(secure).session, options(secure));
}

/**
 * The secret that forms shown before sign-in are bound to: read from its cookie, or made and set now. Signed-in
 * forms are bound to the session instead.
 */
export function preSessionSecret(c: PortalContext, secure: boolean): string {
  const existing = getCookie(c, names(secure).csrf);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const secret = randomToken();
  setCookie(c, names(secure).csrf, secret, options(secure));
  return secret;
}

/** The CSRF token of forms bound to `secret` (a session ID or the pre-session secret): only its holder can make it. */
export const csrfToken = (secret: string) => hashSecret(`csrf:${secret}`);
