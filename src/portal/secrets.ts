// Random identifiers and tokens, and the hashes under which the database keeps session IDs and mailed tokens.
import { createHash, randomBytes, randomInt } from "node:crypto";

const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A random ID of `length` lowercase letters and digits (safe in URLs and in key names). */
export function randomId(length = 12): string {
  let id = "";
  for (let i = 0; i < length; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

/** A secret for a cookie or a mailed link: 32 random bytes, base64url. */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The form in which a secret is stored or compared: sha256, base64url (secrets are random: no need for a slow hash). */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("base64url");
}
