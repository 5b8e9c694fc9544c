// Checking a second-factor code (a TOTP code or a recovery code) for an account: the attempt is taken from the limits
// first (the client's network's and the account's codes', as a password's), then the code is used by one statement
// that only one request can win (store/two-factor.ts), so a code cannot pass twice, whether sent again or at once.
import type { Portal, PortalContext } from "./context.ts";
import { limitAddress } from "./context.ts";
import { findTotp, useRecoveryCode, useTotpStep } from "./store/two-factor.ts";
import { returnAttempt, takeAttempts } from "./store/throttle.ts";
import type { ThrottleRule } from "./store/throttle.ts";
import { normalizeRecoveryCode, recoveryCodeHash, totpStep, unsealSecret } from "./totp.ts";

/** A code checked: right (a TOTP code, or a recovery code now used up), wrong, or not checked (`wait` s locked). */
export type CodeCheck = { ok: true; how: "totp" | "recovery" } | { ok: false; wait: number };

/** The limit of an account's codes (every form that takes one: the sign-in's second step, the account's changes). */
const codeLimitKey = (accountId: string) => `code:${accountId}`;

/**
 * Takes one attempt at a code of `accountId` from the limits, before the code is checked: `wait` s when refused (the
 * code must not be checked), else 0 and `giveBack`, for a right code (which does not count against a limit).
 */
export async function takeCodeAttempt(c: PortalContext, portal: Portal, accountId: string, now: number) {
  const limits: [string, ThrottleRule][] = [
    [`address:${limitAddress(c)}`, portal.throttle.address],
    [codeLimitKey(accountId), portal.throttle.account],
  ];
  const wait = await takeAttempts(portal.db, limits, now);
  const giveBack = async () => {
    for (const [key] of limits) await returnAttempt(portal.db, key);
  };
  return { wait, giveBack };
}

/** The sentence of a code refused because of its limit. */
export const tooManyCodes = (wait: number) =>
  `Too many wrong codes: try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""}`;

/** Checks `typed` as a code of `accountId` at the portal's time; a right one is used (it will not pass again). */
export async function checkCode(
  c: PortalContext,
  portal: Portal,
  accountId: string,
  typed: string,
): Promise<CodeCheck> {
  const now = portal.clock();
  const { wait, giveBack } = await takeCodeAttempt(c, portal, accountId, now);
  if (wait > 0) return { ok: false, wait };
  const how = await useCode(portal, accountId, typed.replace(/\s/g, ""), now);
  if (!how) return { ok: false, wait: 0 };
  await giveBack();
  return { ok: true, how };
}

/** Uses `code` if it is right: a TOTP code of a step later than the last one used, or an unused recovery code. */
async function useCode(portal: Portal, accountId: string, code: string, now: number) {
  if (/^[0-9]{6}$/.test(code)) {
    const factor = await findTotp(portal.db, accountId);
    if (!factor?.confirmed || !portal.secretKey) return null;
    const secret = unsealSecret(portal.secretKey, accountId, factor.sealed);
    const step = secret === null ? null : totpStep(secret, code, now);
    return step !== null && (await useTotpStep(portal.db, accountId, step)) ? "totp" : null;
  }
  const recovery = normalizeRecoveryCode(code);
  if (recovery && (await useRecoveryCode(portal.db, accountId, recoveryCodeHash(recovery), now))) return "recovery";
  return null;
}
