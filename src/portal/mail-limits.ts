// Mail sent because someone on the internet asked (a verification link, a password reset, a new email's link) is
// limited per client address, per recipient and per signed-in account: the portal must not be a way to flood a
// mailbox, or to spend its SMTP server's reputation. The counts share the sign-in throttle's table, under keys of their
// own (`mail-address:`, `mail-to:`, `mail-account:`).
import type { Portal } from "./context.ts";
import { normalizeEmail } from "./store/accounts.ts";
import { returnAttempt, takeAttempts } from "./store/throttle.ts";
import type { ThrottleRule } from "./store/throttle.ts";

/** Mails allowed in a window, and how long a limit reached holds. */
export interface MailLimits {
  /** Per recipient address, and per signed-in account. */
  recipient: ThrottleRule;
  /** Per client address. */
  address: ThrottleRule;
}

/**
 * Defaults: 5 mails an hour to one address (or for one account), 20 an hour asked for from one client address; a
 * limit reached holds for an hour from the mail that reached it.
 */
export const DEFAULT_MAIL_LIMITS = {
  recipient: { failures: 5, windowMs: 3600_000, lockMs: 3600_000 },
  address: { failures: 20, windowMs: 3600_000, lockMs: 3600_000 },
} as const satisfies MailLimits;

/** Who a mail is counted against: the client's address, the recipient, and the signed-in account, if any. */
export interface MailAsker {
  address: string;
  to: string;
  account?: string;
}

const keysOf = (asker: MailAsker): [string, keyof MailLimits][] => [
  [`mail-address:${asker.address}`, "address"],
  [`mail-to:${normalizeEmail(asker.to)}`, "recipient"],
  ...(asker.account ? [[`mail-account:${asker.account}`, "recipient"] as [string, keyof MailLimits]] : []),
];

/**
 * Takes one mail from each of `asker`'s limits, atomically (src/portal/store/throttle.ts), before anything is done for
 * the request: 0 when every limit had room (the mail may be queued), else the seconds to wait (nothing may be done).
 * A request that sends nothing (an address with no account, say) takes the same: the limits say nothing about which
 * addresses have accounts.
 */
export async function takeMailLimits(portal: Portal, asker: MailAsker): Promise<number> {
  const limits = keysOf(asker).map(([key, rule]) => [key, portal.mailLimits[rule]] as const);
  return takeAttempts(portal.db, limits, portal.clock());
}

/** Gives back the mail taken from `asker`'s limits, when the request turned out to send nothing (a wrong password). */
export async function returnMailLimits(portal: Portal, asker: MailAsker): Promise<void> {
  for (const [key] of keysOf(asker)) await returnAttempt(portal.db, key);
}

/** The words of a 429 for mail. */
export const tooManyMails = (wait: number) =>
  `We have sent too many mails for this address or from your network: try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""}.`;
