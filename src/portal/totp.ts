// TOTP (RFC 6238, with otpauth: SHA-1, 6 digits, 30-second steps, as every authenticator app reads them) and recovery
// codes. A TOTP secret is kept sealed: AES-256-GCM under the portal's secret key (PORTAL_SECRET_KEY), with the
// account's ID as associated data, so that the database alone gives no secret and a sealed secret moved to another
// account's row does not open. Recovery codes are 80 random bits each, kept as their SHA-256 (hashSecret): a code
// that random needs no slow hash.
import { createCipheriv, createDecipheriv, randomBytes, randomInt } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import QRCode from "qrcode";
import { hashSecret } from "./secrets.ts";

const ISSUER = "Developer portal";
const PERIOD_S = 30;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The sealed form's version, in front of it, so that a later key or cipher can be told apart. */
const SEALED_PREFIX = "v1.";
/** How many recovery codes an account gets; their alphabet (no I, O, 0, 1) and length (16 x 5 bits = 80 bits). */
const RECOVERY_CODES = 10;
const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const CODE_LENGTH = 16;

/** A new random TOTP secret (160 bits, RFC 4226's advice), base32. */
export const newTotpSecret = () => new Secret({ size: 20 }).base32;

const totpOf = (secret: string, email = "") =>
  new TOTP({ issuer: ISSUER, label: email, secret: Secret.fromBase32(secret), period: PERIOD_S });

/** The otpauth:// URI an authenticator app reads from the QR code. */
export const provisioningUri = (secret: string, email: string) => totpOf(secret, email).toString();

/** The URI as an SVG QR code, drawn here (nothing from another host). */
export const qrSvg = (uri: string) =>
  QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 2, width: 220 });

/**
 * The time step whose code `code` is, within one step either side of `now` (a clock a little off, a code typed as it
 * changed), or null when it is none of them.
 */
export function totpStep(secret: string, code: string, now: number): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const delta = totpOf(secret).validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : TOTP.counter({ period: PERIOD_S, timestamp: now }) + delta;
}

/** `secret` sealed for the account `accountId` under `key` (32 bytes). */
export function sealSecret(key: Buffer, accountId: string, secret: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(`totp:${accountId}`));
  const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** The secret sealed by sealSecret for this account and key, or null (another key, another account's, damaged). */
export function unsealSecret(key: Buffer, accountId: string, sealed: string): string | null {
  if (!sealed.startsWith(SEALED_PREFIX)) return null;
  try {
    const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), "base64url");
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(`totp:${accountId}`));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

/** Ten new recovery codes, as shown: XXXX-XXXX-XXXX-XXXX. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    let code = "";
    for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
    return code.match(/.{4}/g)!.join("-");
  });
}

/** A typed recovery code as it is compared: capitals, without spaces or dashes; null when it cannot be one. */
export function normalizeRecoveryCode(typed: string): string | null {
  const code = typed.replace(/[\s-]/g, "").toUpperCase();
  return code.length === CODE_LENGTH && [...code].every((ch) => CODE_ALPHABET.includes(ch)) ? code : null;
}

/** The form a recovery code is stored and looked up in. */
export const recoveryCodeHash = (normalized: string) => hashSecret(`recovery:${normalized}`);
