// Passkeys' ceremonies (WebAuthn, with @simplewebauthn/server): the options a browser's navigator.credentials call
// takes, and the checks of what it sends back. The relying party is the portal's public URL (PORTAL_URL): its host
// is the RP ID and its origin the only origin accepted, so a passkey made for the portal works there alone. Every
// challenge is kept (store/passkeys.ts) for the browser it was handed to, and used once.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { z } from "zod";
import type { Passkey } from "./store/passkeys.ts";

const RP_NAME = "Developer portal";
/** How long the browser waits for the authenticator, ms (a challenge lives longer: PASSKEY_CHALLENGE_TTL_MS). */
const CEREMONY_TIMEOUT_MS = 120_000;
/** The largest response accepted from a browser, characters (a form body is at most 16 KiB). */
const MAX_RESPONSE = 12_000;

/** The relying party of `publicUrl`: its RP ID (the host) and the one origin accepted. */
function relyingParty(publicUrl: string): { rpID: string; origin: string } {
  const url = new URL(publicUrl);
  return { rpID: url.hostname, origin: url.origin };
}

/** The options to make a passkey for `account`: discoverable (so that it can sign in alone), none of its own again. */
export function registrationOptions(publicUrl: string, account: { id: string; email: string }, existing: Passkey[]) {
  return generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: relyingParty(publicUrl).rpID,
    userName: account.email,
    userID: new TextEncoder().encode(account.id),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: "none",
    excludeCredentials: existing.map((k) => ({ id: k.id, transports: k.transports })),
    authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
  });
}

/**
 * The options to sign in with a passkey: as the second step, one of `allowed` (the account's), user verification
 * preferred; alone (`allowed` null), any passkey the authenticator holds for the portal, user verification required
 * (the passkey then stands for both factors: something held, and a PIN or a fingerprint).
 */
export function authenticationOptions(publicUrl: string, allowed: Passkey[] | null) {
  return generateAuthenticationOptions({
    rpID: relyingParty(publicUrl).rpID,
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: allowed ? "preferred" : "required",
    allowCredentials: allowed?.map((k) => ({ id: k.id, transports: k.transports })) ?? [],
  });
}

const ResponseSchema = z.looseObject({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,1400}$/),
  rawId: z.string(),
  type: z.literal("public-key"),
  response: z.looseObject({ clientDataJSON: z.string().max(MAX_RESPONSE) }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
});

/**
 * A browser's response (the form's `response` field, JSON), with the challenge its client data carries; null when it
 * is none (not JSON, not a credential's shape).
 */
export function parseCredential(
  field: unknown,
): { credential: z.infer<typeof ResponseSchema>; challenge: string } | null {
  if (typeof field !== "string" || field.length > MAX_RESPONSE) return null;
  try {
    const credential = ResponseSchema.parse(JSON.parse(field));
    const client = JSON.parse(Buffer.from(credential.response.clientDataJSON, "base64url").toString("utf8")) as unknown;
    const challenge = (client as { challenge?: unknown } | null)?.challenge;
    return typeof challenge === "string" && challenge.length > 0 ? { credential, challenge } : null;
  } catch {
    return null;
  }
}

/** A new passkey checked (its challenge `challenge`, the portal's origin and RP ID): its key, or null when refused. */
export async function checkRegistration(publicUrl: string, credential: unknown, challenge: string) {
  const { rpID, origin } = relyingParty(publicUrl);
  try {
    const result = await verifyRegistrationResponse({
      response: credential as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    });
    if (!result.verified) return null;
    const { credential: made } = result.registrationInfo;
    return {
      id: made.id,
      publicKey: Buffer.from(made.publicKey).toString("base64url"),
      counter: made.counter,
      transports: (made.transports ?? []).filter((t) => /^[a-z-]{1,20}$/.test(t)).slice(0, 8),
    };
  } catch {
    return null; // not a credential of the portal's (origin, RP ID, challenge), or damaged
  }
}

/**
 * An assertion of `key` checked (its challenge `challenge`; user verification when `verified`): its new counter, or
 * null when refused (wrong signature, origin, RP ID or challenge, a counter not higher than the last one).
 */
export async function checkAssertion(
  publicUrl: string,
  credential: unknown,
  challenge: string,
  key: Passkey,
  verified: boolean,
): Promise<number | null> {
  const { rpID, origin } = relyingParty(publicUrl);
  try {
    const result = await verifyAuthenticationResponse({
      response: credential as AuthenticationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: { id: key.id, publicKey: Buffer.from(key.publicKey, "base64url"), counter: key.counter },
      requireUserVerification: verified,
    });
    return result.verified ? result.authenticationInfo.newCounter : null;
  } catch {
    return null;
  }
}
