// The portal's cookies (the session, the pre-session CSRF secret, the sign-in device, a sign-in waiting for its
// second factor) and the CSRF token derived from the first two.
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
  secure
    ? { session: "__Host-session", csrf: "__Host-csrf", device: "__Host-device", pending: "__Host-signin-code" }
    : { session: "portal-session", csrf: "portal-csrf", device: "portal-device", pending: "portal-signin-code" };

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

/** The device token from the request's cookie, if any looks like one (store/devices.ts checks it). */
export function readDeviceCookie(c: PortalContext, secure: boolean): string | undefined {
  const token = getCookie(c, names(secure).device);
  return token && /^[A-Za-z0-9_-]{43}$/.test(token) ? token : undefined;
}

/** Sets the device cookie, kept by the browser for `maxAgeMs` (past the session: it says the browser signed in before). */
export function writeDeviceCookie(c: PortalContext, secure: boolean, token: string, maxAgeMs: number): void {
  setCookie(c, names(secure).device, token, { ...options(secure), maxAge: Math.floor(maxAgeMs / 1000) });
}

/** The token of a sign-in waiting for its code (store/two-factor.ts checks it), if any looks like one. */
export function readPendingCookie(c: PortalContext, secure: boolean): string | undefined {
  const token = getCookie(c, names(secure).pending);
  return token && /^[A-Za-z0-9_-]{43}$/.test(token) ? token : undefined;
}

/** Sets the pending sign-in's cookie (the password was right; the code is still to come). */
export function writePendingCookie(c: PortalContext, secure: boolean, token: string): void {
  setCookie(c, names(secure).pending, token, options(secure));
}

/** Removes the pending sign-in's cookie. */
export function clearPendingCookie(c: PortalContext, secure: boolean): void {
  deleteCookie(c, names(secure).pending, options(secure));
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
