// OWASP's "Slow Down Online Guessing Attacks with Device Cookies": a browser that has signed in to an account holds a
// device cookie for it, and its sign-ins to that account are limited per device, not by the account's lock. Failures
// from anywhere else lock the account for every browser without one, so an attacker who locks the account locks out
// guessers, never the owner on a device the owner has used before.
import type { Portal, PortalContext } from "./context.ts";
import { readDeviceCookie, writeDeviceCookie } from "./session-cookies.ts";
import { addDevice, deviceOf } from "./store/devices.ts";

/** How long a device is remembered after the sign-in that made its cookie, ms (180 days). */
const DEVICE_LIFETIME_MS = 180 * 86_400_000;

/** The hash of the request's device cookie when it is a live device of `accountId` (its limit's key), else null. */
export async function knownDevice(c: PortalContext, portal: Portal, accountId: string, now: number) {
  const token = readDeviceCookie(c, c.get("secureCookies"));
  return token ? deviceOf(portal.db, token, accountId, now) : null;
}

/** Gives the browser a new device cookie of `accountId` (after a right password), replacing any it had. */
export async function rememberDevice(c: PortalContext, portal: Portal, accountId: string, now: number): Promise<void> {
  const token = await addDevice(portal.db, accountId, now, now + DEVICE_LIFETIME_MS);
  writeDeviceCookie(c, c.get("secureCookies"), token, DEVICE_LIFETIME_MS);
}
