// A new key shown once, by POST, redirect, GET: a creation or rotation records the key here, sealed (AES-256-GCM) under
// a key derived from the session ID, which the database keeps only as a hash, so the row is of no use to anyone but
// the session that made it; the page the form redirects to opens it once, and a reload finds it already shown.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { first } from "../db/database.ts";
import type { PortalDatabase } from "../db/database.ts";
import { randomId } from "./secrets.ts";

/** How long a new key waits to be shown, and then its record to say it was, ms. */
const REVEAL_TTL_MS = 60 * 60_000;
const IV_BYTES = 12;
const TAG_BYTES = 16;

const sealingKey = (sessionId: string, id: string) =>
  createHmac("sha256", sessionId).update(`key-reveal:${id}`).digest();

function seal(sessionId: string, id: string, key: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(sessionId, id), iv);
  const body = Buffer.concat([cipher.update(key, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** The key sealed by `seal` for this session and record, or null (another session's, or not one). */
function unseal(sessionId: string, id: string, sealed: string): string | null {
  try {
    const raw = Buffer.from(sealed, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", sealingKey(sessionId, id), raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

/** A new key to show once: the account's key `keyId`, its secret, and the sentence that introduces it. */
export interface NewKey {
  accountId: string;
  keyId: string;
  key: string;
  intro: string;
}

/** Records `made` for the session `sessionId` to see once; returns the record's ID (for the page's path). */
export async function recordReveal(db: PortalDatabase, sessionId: string, made: NewKey, now: number): Promise<string> {
  const id = randomId(20);
  await db.run("DELETE FROM key_reveals WHERE created < ?", [now - REVEAL_TTL_MS]);
  await db.run("INSERT INTO key_reveals (id, account_id, key_id, intro, sealed, created) VALUES (?, ?, ?, ?, ?, ?)", [
    id,
    made.accountId,
    made.keyId,
    made.intro,
    seal(sessionId, id, made.key),
    now,
  ]);
  return id;
}

/** What the page of record `id` shows: the key (this once), or when it was shown; always the key's label. */
export type Reveal = { label: string; intro: string } & ({ key: string } | { shown: number });

/**
 * Opens record `id` of the account for the session: the key the first time (taken by one statement, so that of two
 * views at once only one shows it), then when it was shown. Null: no such record of this account and session.
 */
export async function openReveal(
  db: PortalDatabase,
  sessionId: string,
  accountId: string,
  id: string,
  now: number,
): Promise<Reveal | null> {
  const row = await first(
    db,
    `SELECT r.intro, r.sealed, r.shown, k.label FROM key_reveals r JOIN api_keys k ON k.id = r.key_id
     WHERE r.id = ? AND r.account_id = ? AND r.created >= ?`,
    [id, accountId, now - REVEAL_TTL_MS],
  );
  if (!row) return null;
  const seen = { label: String(row.label), intro: String(row.intro) };
  if (row.sealed === null) return { ...seen, shown: Number(row.shown) };
  const key = unseal(sessionId, id, String(row.sealed));
  if (key === null) return null;
  const taken = await db.run("UPDATE key_reveals SET sealed = NULL, shown = ? WHERE id = ? AND sealed IS NOT NULL", [
    now,
    id,
  ]);
  return taken === 1 ? { ...seen, key } : { ...seen, shown: now };
}
