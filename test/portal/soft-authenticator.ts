// A software WebAuthn authenticator for the HTTP tests, written from the specification (WebAuthn level 2, CTAP2's
// CBOR): ES256 key pairs from node:crypto, attestation "none", authenticator data built byte by byte, assertions
// signed over authenticatorData || SHA-256(clientDataJSON). It answers as a browser's navigator.credentials would,
// in the JSON @simplewebauthn/browser sends, and can be told to lie (a counter, a signature, a missing verification).
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import type { KeyObject } from "node:crypto";

type Cbor = number | string | Buffer | Cbor[] | Map<Cbor, Cbor> | { [key: string]: Cbor };

/** The head of a CBOR item: its major type and a length or value. */
function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

/** CBOR (RFC 8949) of the few types CTAP2 uses: integers, byte and text strings, arrays and maps. */
function cbor(value: Cbor): Buffer {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") {
    const text = Buffer.from(value, "utf8");
    return Buffer.concat([head(3, text.length), text]);
  }
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const entries = value instanceof Map ? [...value] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest();
const b64 = (data: Buffer) => data.toString("base64url");

/** A credential the authenticator holds. */
interface Held {
  id: Buffer;
  key: KeyObject;
  counter: number;
  /** The user handle (base64url) the portal gave when it was made. */
  userHandle: string;
}

/** What an assertion may be told to do wrong. */
export interface Lie {
  /** The counter sent (default: one more than the last). */
  counter?: number;
  /** Signs other bytes: a wrong signature. */
  badSignature?: boolean;
  /** The user not verified (UV flag off). */
  unverified?: boolean;
  /** The origin in the client data (default: the authenticator's). */
  origin?: string;
}

/** A software authenticator for the relying party of `origin` (its host is the RP ID). */
export class SoftAuthenticator {
  readonly held: Held[] = [];
  readonly origin: string;
  constructor(origin: string) {
    this.origin = origin;
  }
  private get rpIdHash() {
    return sha256(new URL(this.origin).hostname);
  }

  /** navigator.credentials.create with `options` (the JSON the portal gave): a new ES256 credential, attestation none. */
  register(options: { challenge: string; user: { id: string } }) {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const cose = new Map<Cbor, Cbor>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, "base64url")],
      [-3, Buffer.from(jwk.y!, "base64url")],
    ]);
    const id = randomBytes(16);
    const length = Buffer.from([id.length >> 8, id.length & 255]);
    const flags = 0x01 | 0x04 | 0x40; // user present, user verified, attested credential data
    const authData = Buffer.concat([
      this.rpIdHash,
      Buffer.from([flags]),
      Buffer.alloc(4),
      Buffer.alloc(16),
      length,
      id,
      cbor(cose),
    ]);
    const attestationObject = cbor({ fmt: "none", attStmt: {}, authData });
    const clientData = JSON.stringify({ type: "webauthn.create", challenge: options.challenge, origin: this.origin });
    this.held.push({ id, key: privateKey, counter: 0, userHandle: options.user.id });
    return {
      id: b64(id),
      rawId: b64(id),
      type: "public-key",
      response: {
        clientDataJSON: b64(Buffer.from(clientData)),
        attestationObject: b64(attestationObject),
        transports: ["internal"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** navigator.credentials.get for `challenge` with the `which`th credential held, telling `lie` if asked to. */
  assert(challenge: string, which = 0, lie: Lie = {}) {
    const held = this.held[which]!;
    held.counter = lie.counter ?? held.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(held.counter);
    const flags = lie.unverified ? 0x01 : 0x05;
    const authData = Buffer.concat([this.rpIdHash, Buffer.from([flags]), counter]);
    const clientData = Buffer.from(
      JSON.stringify({ type: "webauthn.get", challenge, origin: lie.origin ?? this.origin, crossOrigin: false }),
    );
    const signed = Buffer.concat([authData, sha256(clientData)]);
    const signature = sign("sha256", lie.badSignature ? Buffer.concat([signed, Buffer.from([0])]) : signed, held.key);
    return {
      id: b64(held.id),
      rawId: b64(held.id),
      type: "public-key",
      response: {
        clientDataJSON: b64(clientData),
        authenticatorData: b64(authData),
        signature: b64(signature),
        userHandle: held.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }
}
