// A new signing secret shown once, by POST, redirect, GET: the form that adds an endpoint or rotates its secret records
// the secret here for the session that sent it, sealed under PORTAL_SECRET_KEY (as the endpoint's own copy is) and
// bound to the endpoint and to the session's ID, which the database keeps only hashed; the endpoint's page the form
// redirects to takes it with the one statement that reads it (DELETE ... RETURNING), so that of two views at once only
// one shows it, and a reload shows the page without it.
import type { PortalDatabase, Queries } from "../../db/database.ts";
import { hashSecret } from "../secrets.ts";
import { sealSecret, unsealSecret } from "../totp.ts";

/** How long a new secret waits for its page, ms; after that it is not shown (the page says to rotate it). */
export const SECRET_REVEAL_TTL_MS = 5 * 60_000;

/** What the sealing is bound to: the endpoint, and the session's ID (never stored). */
const boundTo = (sessionId: string, endpointId: string) => `webhook-reveal:${endpointId}:${sessionId}`;

/** A secret to show once, and the sentence that introduces it. */
export interface SecretReveal {
  secret: string;
  intro: string;
}

/**
 * Records `reveal` for the session `sessionId` to see once on the page of endpoint `endpointId` (replacing one not yet
 * seen there), and deletes the reveals older than SECRET_REVEAL_TTL_MS.
 */
export async function recordSecretReveal(
  db: Queries,
  key: Buffer,
  sessionId: string,
  endpointId: string,
  reveal: SecretReveal,
  now: number,
): Promise<void> {
  await db.run("DELETE FROM webhook_secret_reveals WHERE created < ?", [now - SECRET_REVEAL_TTL_MS]);
  await db.run(
    `INSERT INTO webhook_secret_reveals (session_hash, endpoint_id, intro, sealed, created) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (session_hash, endpoint_id) DO UPDATE SET intro = excluded.intro, sealed = excluded.sealed,
       created = excluded.created`,
    [
      hashSecret(sessionId),
      endpointId,
      reveal.intro,
      sealSecret(key, boundTo(sessionId, endpointId), reveal.secret),
      now,
    ],
  );
}

/**
 * Takes the session's secret waiting for endpoint `endpointId`'s page: deleted by the statement that reads it, so that
 * it is shown once however many views ask at once. Null: none waiting (shown already, expired, or another session's).
 */
export async function takeSecretReveal(
  db: PortalDatabase,
  key: Buffer,
  sessionId: string,
  endpointId: string,
  now: number,
): Promise<SecretReveal | null> {
  const [row] = await db.all(
    `DELETE FROM webhook_secret_reveals WHERE session_hash = ? AND endpoint_id = ? AND created >= ?
     RETURNING intro, sealed`,
    [hashSecret(sessionId), endpointId, now - SECRET_REVEAL_TTL_MS],
  );
  if (!row) return null;
  const secret = unsealSecret(key, boundTo(sessionId, endpointId), String(row.sealed));
  return secret === null ? null : { secret, intro: String(row.intro) };
}
