// Security mail: the account (or organisation) is told when its keys, password, email, standing, members or settings
// change, and before a rotated key's old key stops working. Each event is written with its line on the account's trail
// and its mails to the outbox in the transaction of the change itself (or right after a change made outside the
// database: the keys file), so that a change that fails sends nothing and a change made once sends one mail to each
// recipient.
import type { PortalDatabase, Queries } from "../db/database.ts";
import { first } from "../db/database.ts";
import { graceUntil, loadKeysFile } from "../keys/keys-file.ts";
import type { Portal } from "./context.ts";
import { queueMail } from "./store/outbox-rows.ts";
import { recordAudit } from "./store/audit.ts";
import { listMembers } from "./store/organisations.ts";
import type { MemberRole } from "./store/organisations.ts";

/** A key as a mail names it: its label and its first and last 4 characters, never more. */
interface KeyNote {
  label: string;
  first4: string;
  last4: string;
}

/** What happened, as the mail tells it. */
export type SecurityEvent =
  | { event: "key.created" | "key.revoked"; key: KeyNote }
  | { event: "key.rotated"; key: KeyNote; next: { first4: string; last4: string }; graceUntil: number | null }
  | { event: "key.grace_ending"; key: KeyNote; until: number }
  | { event: "password.changed" | "password.reset" }
  | { event: "twofactor.enabled" | "twofactor.codes_renewed" }
  /** `passkeysLeft`: only the authenticator app went; two-factor stays on with the account's passkeys. */
  | { event: "twofactor.disabled"; passkeysLeft?: boolean }
  /** `first`: the account's first second factor (two-factor is now on); `off`: its last (two-factor is now off). */
  | { event: "passkey.added"; name: string; first: boolean }
  | { event: "passkey.removed"; name: string; off: boolean }
  | { event: "email.changed"; from: string; to: string }
  | { event: "operator.approved" | "operator.suspended"; reason: string }
  | { event: "member.invited" | "member.joined" | "member.removed"; org: string; email: string; role: MemberRole }
  | { event: "member.role_changed"; org: string; email: string; from: MemberRole; to: MemberRole }
  | { event: "org.renamed"; from: string; to: string }
  | { event: "org.two_factor_required"; org: string; on: boolean };

/** An event on an account: its mails and its line on the trail. */
export interface SecurityNotice {
  accountId: string;
  /** The addresses mailed (one mail each, duplicates dropped): see securityRecipients. */
  recipients: readonly string[];
  at: number;
  /** The client's address (on the trail; in the mail unless an operator acted). */
  address: string;
  /** The trail's line. */
  detail: string;
  /** Who did it (a member's email), for the trail; default the account's own. */
  actor?: string;
  what: SecurityEvent;
  /** An ID that makes the event happen once: recorded again, it writes and sends nothing (the trail's row ID). */
  once?: string;
}

/** How long before a rotated key's old key stops working its account is told, ms. */
const GRACE_NOTICE_MS = 24 * 3600_000;

/** How often the portal looks for grace periods ending within GRACE_NOTICE_MS, ms. */
export const GRACE_CHECK_MS = 10 * 60_000;

/** Who is told of a change to a person's own sign-in (password, email, two-factor): that person. */
export const securityRecipients = (account: { email: string }): string[] => [account.email];

/**
 * Who is told of a change to an organisation (its keys, members and settings, an operator's decision): its owners, and
 * the member who acted (`actor`), if not one of them.
 */
export async function organisationRecipients(
  db: PortalDatabase,
  orgId: string,
  actor?: { email: string },
): Promise<string[]> {
  const owners = (await listMembers(db, orgId)).filter((m) => m.role === "owner").map((m) => m.email);
  return [...new Set(actor ? [...owners, actor.email] : owners)];
}

const utc = (at: number) => `${new Date(at).toISOString().slice(0, 16).replace("T", " ")} UTC`;
const keyText = (k: { first4: string; last4: string }) => `${k.first4}…${k.last4}`;

/** The mail's subject and what it says happened, of an event of an organisation's members or settings. */
function describeTeam(what: Extract<SecurityEvent, { event: `member.${string}` | `org.${string}` }>) {
  switch (what.event) {
    case "member.invited":
      return {
        subject: `A member was invited to ${what.org} on the developer portal`,
        text: `${what.email} was invited to join ${what.org} as ${what.role} on the developer portal.`,
      };
    case "member.joined":
      return {
        subject: `${what.email} joined ${what.org} on the developer portal`,
        text: `${what.email} accepted an invitation and joined ${what.org} as ${what.role} on the developer portal.`,
      };
    case "member.removed":
      return {
        subject: `${what.email} was removed from ${what.org} on the developer portal`,
        text: `${what.email} (${what.role}) was removed from ${what.org}: their sessions for it are ended, and they can no longer see its keys or usage.`,
      };
    case "member.role_changed":
      return {
        subject: `A member's role in ${what.org} was changed on the developer portal`,
        text: `The role of ${what.email} in ${what.org} was changed from ${what.from} to ${what.to}.`,
      };
    case "org.renamed":
      return {
        subject: `${what.from} is now named ${what.to} on the developer portal`,
        text: `The organisation ${what.from} was renamed ${what.to} on the developer portal.`,
      };
    case "org.two_factor_required":
      return what.on
        ? {
            subject: `${what.org} now requires two-factor sign-in of every member`,
            text: `${what.org} now requires two-factor sign-in of every member: a member without it is sent to set it up before any other page of the portal.`,
          }
        : {
            subject: `${what.org} no longer requires two-factor sign-in`,
            text: `${what.org} no longer requires two-factor sign-in of its members: each member chooses whether to use it.`,
          };
  }
}

/** Whether the event is one of an organisation's members or settings (described by describeTeam). */
const ofTeam = (what: SecurityEvent) => what.event.startsWith("member.") || what.event.startsWith("org.");

/** The mail's subject and what it says happened. */
function describe(what: SecurityEvent, publicUrl: string): { subject: string; text: string } {
  switch (what.event) {
    case "member.invited":
    case "member.joined":
    case "member.removed":
    case "member.role_changed":
    case "org.renamed":
    case "org.two_factor_required":
      return describeTeam(what);
    case "key.created":
      return {
        subject: "A new API key was made on your developer portal account",
        text: `A new API key, "${what.key.label}" (${keyText(what.key)}), was made on your developer portal account.`,
      };
    case "key.revoked":
      return {
        subject: "An API key of your developer portal account was revoked",
        text: `The API key "${what.key.label}" (${keyText(what.key)}) was revoked: the API refuses it from now on.`,
      };
    case "key.rotated":
      return {
        subject: "An API key of your developer portal account was rotated",
        text:
          `The API key "${what.key.label}" (${keyText(what.key)}) was replaced by a new key (${keyText(what.next)}). ` +
          (what.graceUntil === null
            ? "The old key is refused from now on."
            : `The old key works until ${utc(what.graceUntil)}.`),
      };
    case "key.grace_ending":
      return {
        subject: "An old API key stops working within 24 hours",
        text:
          `The API key "${what.key.label}" was rotated; the key it replaced is refused from ${utc(what.until)}. ` +
          `Any client still sending the old key needs the new one (${keyText(what.key)}) before then.`,
      };
    case "password.changed":
      return {
        subject: "Your developer portal password was changed",
        text: "The password of your developer portal account was changed, and every session signed in was ended.",
      };
    case "password.reset":
      return {
        subject: "Your developer portal password was reset",
        text: "The password of your developer portal account was reset by a link mailed to it, and every session signed in was ended.",
      };
    case "twofactor.enabled":
      return {
        subject: "Two-factor sign-in was turned on for your developer portal account",
        text: "Two-factor sign-in was turned on for your developer portal account: signing in now needs a code from the authenticator app or a recovery code, and every other session signed in was ended.",
      };
    case "twofactor.disabled":
      return what.passkeysLeft
        ? {
            subject: "The authenticator app no longer signs in to your developer portal account",
            text: "The authenticator app was removed from your developer portal account's two-factor sign-in: its codes no longer work. Its passkeys still do, so two-factor sign-in stays on.",
          }
        : {
            subject: "Two-factor sign-in was turned off for your developer portal account",
            text: "Two-factor sign-in was turned off for your developer portal account: signing in needs the password alone again.",
          };
    case "passkey.added":
      return {
        subject: "A passkey was added to your developer portal account",
        text:
          `A passkey, "${what.name}", was added to your developer portal account: it signs in as a second factor ` +
          "after the password, or alone." +
          (what.first ? " Two-factor sign-in is now on, and every other session signed in was ended." : ""),
      };
    case "passkey.removed":
      return {
        subject: "A passkey was removed from your developer portal account",
        text:
          `The passkey "${what.name}" was removed from your developer portal account: it no longer signs in.` +
          (what.off ? " It was the last second factor: signing in needs the password alone again." : ""),
      };
    case "twofactor.codes_renewed":
      return {
        subject: "New recovery codes were made for your developer portal account",
        text: "Ten new recovery codes were made for your developer portal account; the old ones no longer work.",
      };
    case "email.changed":
      return {
        subject: "Your developer portal account has a new email address",
        text: `The email address of your developer portal account was changed from ${what.from} to ${what.to}, and every session signed in elsewhere was ended.`,
      };
    case "operator.approved":
      return {
        subject: "Your developer portal account is approved",
        text:
          `The API's operator approved your developer portal account: sign in at ${publicUrl}/sign-in to make API keys.` +
          (what.reason ? `\n\nThe operator's note: ${what.reason}` : ""),
      };
    case "operator.suspended":
      return {
        subject: "Your developer portal account is suspended",
        text:
          `The API's operator suspended your developer portal account.\n\nReason: ${what.reason}\n\n` +
          "While it is suspended, the API refuses its keys (401, code api_key_suspended) and you cannot sign in to " +
          "the portal. Its keys work again as soon as the operator reinstates the account.",
      };
  }
}

/** What to do if the partner did not do it. */
function advice(what: SecurityEvent, publicUrl: string): string {
  if (what.event === "operator.approved" || what.event === "operator.suspended")
    return "If you have a question about this, reply to this mail.";
  if (ofTeam(what))
    return (
      "If this was expected, there is nothing to do. If not, tell an owner of the organisation (an owner can undo it " +
      `at ${publicUrl}/team); if no owner did it, someone else can sign in to an owner's account: reset your ` +
      `password at ${publicUrl}/reset at once, and tell the portal's operator.`
    );
  const mine = what.event === "key.grace_ending" ? "If you rotated this key" : "If this was you";
  return (
    `${mine}, there is nothing to do. If it was not, someone else can sign in to your account: reset your ` +
    `password at ${publicUrl}/reset at once, revoke any key you do not know at ${publicUrl}/keys, and tell the ` +
    "portal's operator."
  );
}

/** The mail of a notice: what happened, when (UTC), from which client address (a partner's action), what to do. */
function renderSecurityMail(notice: SecurityNotice, publicUrl: string): { subject: string; text: string } {
  const { subject, text } = describe(notice.what, publicUrl);
  const byOperator = notice.what.event.startsWith("operator.");
  const from = byOperator || !notice.address ? "" : `From: ${notice.address} (the address the change was made from)\n`;
  const by = ofTeam(notice.what) && notice.actor ? `By: ${notice.actor}\n` : "";
  return { subject, text: `${text}\n\nWhen: ${utc(notice.at)}\n${by}${from}\n${advice(notice.what, publicUrl)}\n` };
}

/**
 * Records `notice` (its line on the trail, one mail to each recipient in the outbox) in one transaction with
 * `change`, which says whether it changed anything: false (another request made the change first), or a throw,
 * leaves nothing written. Returns whether the notice was recorded.
 */
export async function recordSecurityEvent(
  portal: Pick<Portal, "db" | "mailer" | "publicUrl">,
  notice: SecurityNotice,
  change: (tx: Queries) => Promise<boolean> = () => Promise.resolve(true),
): Promise<boolean> {
  const mail = renderSecurityMail(notice, portal.publicUrl());
  const done = await portal.db.transaction(async (tx) => {
    if (!(await change(tx))) return false;
    const entry = {
      at: notice.at,
      event: notice.what.event,
      detail: notice.detail,
      address: notice.address,
      ...(notice.actor !== undefined ? { actor: notice.actor } : {}),
    };
    if (!(await recordAudit(tx, notice.accountId, entry, notice.once))) return false; // recorded before
    for (const to of new Set(notice.recipients)) await queueMail(tx, { to, ...mail }, notice.at);
    return true;
  });
  if (done) portal.mailer.queued();
  return done;
}

/**
 * Tells each account whose rotated key's old key stops working within GRACE_NOTICE_MS, once a rotation (the trail's
 * row, by key and end, says it was told: a restart or a second portal process does not tell it again). A rotation
 * whose grace period was no longer than that is not: its own mail said when the old key stops. Returns the mails'
 * count.
 */
export async function mailGraceEndings(
  portal: Pick<Portal, "db" | "mailer" | "publicUrl" | "keysFile">,
  now: number,
): Promise<number> {
  let sent = 0;
  for (const record of (await loadKeysFile(portal.keysFile)).keys) {
    const until = graceUntil(record, now);
    if (!until || Date.parse(until) - now > GRACE_NOTICE_MS) continue;
    if (record.rotated && Date.parse(until) - Date.parse(record.rotated) <= GRACE_NOTICE_MS) continue;
    const row = await first(
      portal.db,
      `SELECT api_keys.account_id, api_keys.label, api_keys.first4, api_keys.last4, accounts.email
       FROM api_keys JOIN accounts ON accounts.id = api_keys.account_id WHERE api_keys.file_name = ?`,
      [record.name],
    );
    if (!row) continue; // a key `npm run keys` made: no account to tell
    const key = { label: String(row.label), first4: String(row.first4), last4: String(row.last4) };
    const notice: SecurityNotice = {
      accountId: String(row.account_id),
      recipients: await organisationRecipients(portal.db, String(row.account_id)),
      at: now,
      address: "",
      detail: `"${key.label}": the old key is refused from ${utc(Date.parse(until))}`,
      what: { event: "key.grace_ending", key, until: Date.parse(until) },
      once: `grace:${record.name}:${until}`,
    };
    if (await recordSecurityEvent(portal, notice)) sent++;
  }
  return sent;
}
