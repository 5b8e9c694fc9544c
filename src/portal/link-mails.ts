// The mails with a link (verification, password reset, a new email, an invitation), made when the outbox sends them: the account is
// looked up and the token issued then, so that the request that asked for one did the same work whatever the address.
import type { PortalDatabase } from "../db/database.ts";
import type { Mail } from "./mailer.ts";
import { findAccount, findAccountByEmail } from "./store/accounts.ts";
import type { OutboxRow } from "./store/outbox-rows.ts";
import { issueInvitationToken } from "./store/invitations.ts";
import { issueToken } from "./store/tokens.ts";

/** The mail to an address that has an account, when someone signs up (or asks for a verification link) with it. */
export const accountExistsMail = (to: string, publicUrl: string): Mail => ({
  to,
  subject: "Someone tried to sign up with your address",
  text: `You already have an account. Sign in at ${publicUrl}/sign-in, or reset your password at ${publicUrl}/reset.\n`,
});

/** The mail a row of the outbox becomes (a link mail with a new token in it); null when there is nothing to send. */
export async function prepareMail(
  db: PortalDatabase,
  row: OutboxRow,
  publicUrl: string,
  now: number,
): Promise<Mail | null> {
  switch (row.kind) {
    case "verify": {
      // By the account's ID (sign-up, sign-in), or by address ("send the link again"): that may have no account, or
      // one confirmed already, whose owner is told that they have an account.
      const byAddress = row.accountId === null;
      const account = byAddress
        ? row.to === ""
          ? null
          : await findAccountByEmail(db, row.to)
        : await findAccount(db, row.accountId!);
      if (!account) return null; // gone, or no account has the address (the page said "if it has an account")
      if (account.verified !== null) return byAddress ? accountExistsMail(account.email, publicUrl) : null;
      const token = await issueToken(db, account, "verify", account.email, now);
      return {
        to: account.email,
        subject: "Confirm your email address for the developer portal",
        text: `Open this link to confirm your address (it works once, for 24 hours):\n\n${publicUrl}/verify?token=${token}\n`,
      };
    }
    case "reset": {
      const account = await findAccountByEmail(db, row.to);
      if (!account) return null; // the page said "if it has an account"
      const token = await issueToken(db, account, "reset", account.email, now);
      return {
        to: account.email,
        subject: "Reset your developer portal password",
        text: `Open this link to choose a new password (it works once, for 1 hour):\n\n${publicUrl}/reset/confirm?token=${token}\n\nIf you did not ask for this, ignore this mail.\n`,
      };
    }
    case "email": {
      const account = row.accountId === null ? null : await findAccount(db, row.accountId);
      if (!account || (await findAccountByEmail(db, row.to))) return null; // gone, or the address is taken
      const token = await issueToken(db, account, "email", row.to, now);
      return {
        to: row.to,
        subject: "Confirm your new email address for the developer portal",
        text: `Open this link to make this your account's address (it works once, for 24 hours):\n\n${publicUrl}/email/confirm?token=${token}\n`,
      };
    }
    case "invite": {
      const issued = row.accountId === null ? null : await issueInvitationToken(db, row.accountId, now);
      if (!issued) return null; // withdrawn or expired
      const { token, invitation } = issued;
      const days = Math.round((invitation.expires - now) / 86_400_000);
      return {
        to: invitation.email,
        subject: `You are invited to ${invitation.orgName} on the developer portal`,
        text: `${invitation.invitedBy} invited you to join ${invitation.orgName} as ${invitation.role}. Open this link to accept (it works once, for this address only, for ${days} days):\n\n${publicUrl}/invitations/accept?token=${token}\n\nIf you did not expect this, ignore this mail.\n`,
      };
    }
    case "mail":
      return { to: row.to, subject: row.subject, text: row.text };
  }
}
