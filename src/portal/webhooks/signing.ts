// Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over `id.timestamp.body` with the
// secret's bytes (a secret is `whsec_` + base64 of 24 random bytes), sent as `v1,<base64>`, space-separated when two
// secrets sign during a rotation's overlap. Secrets are kept sealed under PORTAL_SECRET_KEY (totp.ts's sealing, bound
// to the endpoint's ID), so that the database alone gives no secret.
import { createHmac, randomBytes } from "node:crypto";
import { sealSecret, unsealSecret } from "../totp.ts";
import { boundedMemo } from "../../bounded-memo.ts";

const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 24;

/** A new signing secret: `whsec_` and 24 random bytes, base64. */
export const newWebhookSecret = () => SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");

/** The `v1,<base64>` signature of one delivery under `secret`. */
function signature(secret: string, id: string, timestamp: number, body: Buffer | string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64");
  return `v1,${mac}`;
}

/** The three headers of a delivery: its ID, timestamp (Unix seconds) and every secret's signature. */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: Buffer,
): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((s) => signature(s, id, timestamp, body)).join(" "),
  };
}

/** `secret` sealed for the endpoint `endpointId` under the portal's key. */
export const sealWebhookSecret = (key: Buffer, endpointId: string, secret: string) =>
  sealSecret(key, `webhook:${endpointId}`, secret);

/** The secret sealed by sealWebhookSecret for this endpoint, or null (another key or endpoint, damaged). */
export const unsealWebhookSecret = (key: Buffer, endpointId: string, sealed: string) =>
  unsealSecret(key, `webhook:${endpointId}`, sealed);

/**
 * unsealWebhookSecret with the last `max` answers kept in memory (only: nothing unsealed is written anywhere), keyed
 * by the endpoint's ID and the sealed text, so that each delivery to an endpoint does not decipher its secret again
 * (a sealed text is new at each rotation: its random IV). The least recently used is dropped beyond `max`.
 */
export function createSecretCache(key: Buffer, max: number) {
  const unseal = boundedMemo(max, (name) => {
    const at = name.indexOf(" ");
    return unsealWebhookSecret(key, name.slice(0, at), name.slice(at + 1));
  });
  return (endpointId: string, sealed: string): string | null => unseal(`${endpointId} ${sealed}`);
}
