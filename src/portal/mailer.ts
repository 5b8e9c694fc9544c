// Mail to partners (verification and reset links) through SMTP with nodemailer, or, without SMTP_URL, into the log.
import { createTransport } from "nodemailer";

/** A message: plain text, one link in it. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail; `close` ends the SMTP connection pool. */
export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/**
 * SMTP at `smtpUrl` (`smtp://user:pass@host:port`, `smtps://...`), sending as `from`; without a URL, each mail is
 * written with `log` (the portal's stderr), for local use: the link is there to copy.
 */
export function createMailer(smtpUrl: string | undefined, from: string, log: (line: string) => void): Mailer {
  if (!smtpUrl) {
    return {
      send: (mail) => {
        log(`portal: no SMTP_URL, so the mail is here: to ${mail.to}: ${mail.subject}\n${mail.text}`);
        return Promise.resolve();
      },
      close: () => {},
    };
  }
  const transport = createTransport(smtpUrl);
  return {
    send: async (mail) => {
      await transport.sendMail({ from, ...mail });
    },
    close: () => transport.close(),
  };
}
