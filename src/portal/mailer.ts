// Mail to partners: what the routes send (queued in the outbox, src/portal/outbox.ts), and the transport the outbox's
// sender hands it to: SMTP through nodemailer, or, without SMTP_URL, the log.
import { createTransport } from "nodemailer";

/** A message: plain text. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/**
 * A mail with a link whose token is issued when the mail is sent, not when it is asked for (src/portal/link-mails.ts):
 * the request that asks for it does the same work whether or not the address has an account, and no live link waits
 * in the outbox.
 *
 * - `verify`: a link that confirms the account's address (none if it is confirmed by then); asked for by address (`to`,
 *   "send the link again"), to the account that has it: its link while unconfirmed, else a note that it has an account;
 * - `reset`: a link that sets a new password, to `to` if an account has that address (else nothing is sent);
 * - `email`: a link that makes `to` the account's address (none if another account has it by then);
 * - `invite`: the link of invitation `invitationId` (src/portal/store/invitations.ts), to `to` (none once expired).
 */
export type LinkMail =
  | { link: "verify"; accountId: string }
  | { link: "verify"; to: string }
  | { link: "reset"; to: string }
  | { link: "email"; accountId: string; to: string }
  | { link: "invite"; invitationId: string; to: string };

/** What the routes send through: `send` resolves once the mail is queued; the outbox's sender sends it. */
export interface Mailer {
  send(mail: Mail | LinkMail): Promise<void>;
  /** Has the sender look at the outbox: rows were queued in a transaction of the caller's (queueMail), committed now. */
  queued(): void;
}

/** Sends one mail now; `close` ends its connections. */
export interface MailTransport {
  /** `id` (the same on every attempt at one mail) becomes its Message-ID. */
  send(mail: Mail, id: string): Promise<void>;
  close(): void;
}

/** How long the SMTP server may take to accept a connection, greet, and answer, ms. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as const;

/**
 * SMTP at `smtpUrl` (`smtp://user:pass@host:port`, `smtps://...`), sending as `from`; without a URL, each mail is
 * written with `log` (the portal's stderr), for local use: the link is there to copy.
 */
export function createMailer(smtpUrl: string | undefined, from: string, log: (line: string) => void): MailTransport {
  if (!smtpUrl) {
    return {
      send: (mail) => {
        log(`portal: no SMTP_URL, so the mail is here: to ${mail.to}: ${mail.subject}\n${mail.text}`);
        return Promise.resolve();
      },
      close: () => {},
    };
  }
  const transport = createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? "localhost";
  return {
    send: async (mail, id) => {
      await transport.sendMail({ from, messageId: `<${id}@${domain}>`, ...mail });
    },
    close: () => transport.close(),
  };
}
