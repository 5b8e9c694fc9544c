// The outbox: mail queued by the routes, claimed one row at a time by a sender (of one portal process or several on
// one PostgreSQL), deleted once sent or given up.
import type { PortalDatabase, Queries } from "../../db/database.ts";
import type { LinkMail, Mail } from "../mailer.ts";
import { randomId } from "../secrets.ts";

/** A queued mail as a sender claims it: `attempts` counts this one. */
export interface OutboxRow {
  id: string;
  /** `mail` (subject and text given), or the kind of link mail. */
  kind: "mail" | LinkMail["link"];
  to: string;
  /** The account a link mail is about (an `invite`: the invitation's ID). */
  accountId: string | null;
  subject: string;
  text: string;
  attempts: number;
}

const KINDS: readonly OutboxRow["kind"][] = ["mail", "verify", "reset", "email", "invite"];

/** Queues `mail`, due at once (in the caller's transaction, when `db` is one); returns its ID. */
export async function queueMail(db: Queries, mail: Mail | LinkMail, now: number): Promise<string> {
  const id = randomId(16);
  const [kind, to, accountId, subject, text] =
    "link" in mail
      ? [
          mail.link,
          "to" in mail ? mail.to : "",
          "accountId" in mail ? mail.accountId : "invitationId" in mail ? mail.invitationId : null,
          "",
          "",
        ]
      : ["mail", mail.to, null, mail.subject, mail.text];
  await db.run(
    `INSERT INTO outbox (id, kind, recipient, account_id, subject, body, queued, next_at, attempts, claimed_until)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0)`,
    [id, kind, to, accountId, subject, text, now, now],
  );
  return id;
}

/**
 * Claims the mail due first (none: null) until `until`, counting an attempt, in one statement: of senders claiming at
 * once, one gets each row. PostgreSQL skips rows another transaction has locked; the outer condition is checked again
 * on the row as it is when the update takes it (SQLite serialises writers anyway).
 */
export async function claimMail(db: PortalDatabase, now: number, until: number): Promise<OutboxRow | null> {
  const skipLocked = db.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
  const rows = await db.all(
    `UPDATE outbox SET claimed_until = ?, attempts = attempts + 1
     WHERE id = (SELECT id FROM outbox WHERE next_at <= ? AND claimed_until <= ? ORDER BY next_at LIMIT 1${skipLocked})
       AND next_at <= ? AND claimed_until <= ?
     RETURNING id, kind, recipient, account_id, subject, body, attempts`,
    [until, now, now, now, now],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: String(row.id),
    kind: KINDS.find((k) => k === row.kind) ?? "mail",
    to: String(row.recipient),
    accountId: row.account_id === null ? null : String(row.account_id),
    subject: String(row.subject),
    text: String(row.body),
    attempts: Number(row.attempts),
  };
}

/** Removes a mail: sent, or given up. */
export async function deleteMail(db: PortalDatabase, id: string): Promise<void> {
  await db.run("DELETE FROM outbox WHERE id = ?", [id]);
}

/**
 * Puts a claimed mail back, due at `at` (its attempt failed). Only while the claim is still the caller's: a row
 * claimed again by another sender since (the caller's claim ran out) has more attempts, and is left to it.
 */
export async function retryMail(db: PortalDatabase, row: OutboxRow, at: number): Promise<void> {
  await db.run("UPDATE outbox SET next_at = ?, claimed_until = 0 WHERE id = ? AND attempts = ?", [
    at,
    row.id,
    row.attempts,
  ]);
}

/** When the next mail falls due (its retry time, or the end of another sender's claim on it); null: none queued. */
export async function nextDue(db: PortalDatabase): Promise<number | null> {
  const rows = await db.all(
    "SELECT MIN(CASE WHEN claimed_until > next_at THEN claimed_until ELSE next_at END) AS due FROM outbox",
  );
  const due = rows[0]?.due;
  return due === null || due === undefined ? null : Number(due);
}
