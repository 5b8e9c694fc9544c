// Password hashing: scrypt (node:crypto) with the parameters stored in each hash, run in a bounded pool (hash-pool.ts)
// so that a burst of sign-ins holds a fixed amount of memory.
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import type { ScryptOptions } from "node:crypto";
import { createHashPool } from "./hash-pool.ts";

interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/**
 * OWASP Password Storage Cheat Sheet: scrypt with N=2^14, r=8, p=5, one of its equivalent settings to N=2^17, r=8,
 * p=1, chosen for its memory: 16 MiB a hash rather than 128 MiB (p's lanes run one after another in the same memory).
 */
const SCRYPT_PARAMS: ScryptParams = { N: 2 ** 14, r: 8, p: 5 };
const KEY_LENGTH = 32;
/** Hashes run at once (at the current parameters): 2 x 16 MiB. A hash of older, larger parameters runs alone. */
const HASHES_AT_ONCE = 2;
/** Hashes that may wait for a start; past them a request is refused (503, Retry-After) rather than held. */
const HASH_QUEUE = 8;
/** The Retry-After of that refusal, seconds: about the time the queue takes to drain. */
const BUSY_RETRY_AFTER_S = 2;

/** The memory one scrypt hash holds, bytes (OpenSSL: 128 x N x r, reused by each of the p lanes). */
const memoryOf = ({ N, r }: ScryptParams) => 128 * N * r;

const pool = createHashPool({
  budget: HASHES_AT_ONCE * memoryOf(SCRYPT_PARAMS),
  queue: HASH_QUEUE,
  retryAfter: BUSY_RETRY_AFTER_S,
});

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 2 * memoryOf(params) + 1024 * 1024 };
  return pool(
    memoryOf(params),
    () =>
      new Promise<Buffer>((resolve, reject) =>
        scrypt(password.normalize("NFC"), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
      ),
  );
}

const prefixOf = ({ N, r, p }: ScryptParams) => `scrypt$${N}$${r}$${p}$`;

/**
 * `scrypt$N$r$p$<salt>$<hash>` (base64url), with a fresh 16-byte salt. Rejects with HashingBusyError when the pool's
 * queue is full.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT_PARAMS);
  return `${prefixOf(SCRYPT_PARAMS)}${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** The parameters of a stored hash when they are ones scrypt takes and within bounds (at most 1 GiB); else null. */
function paramsOf(n = "", r = "", p = ""): ScryptParams | null {
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const { N } = params;
  const whole = (x: number, max: number) => Number.isInteger(x) && x >= 1 && x <= max;
  const ok = whole(N, 2 ** 20) && N > 1 && (N & (N - 1)) === 0 && whole(params.r, 64) && whole(params.p, 16);
  return ok && memoryOf(params) <= 2 ** 30 ? params : null;
}

/**
 * Whether `password` matches `stored` (compared in constant time); false for a hash this code does not read. A hash
 * of other parameters than the current ones still verifies (with its own). Rejects with HashingBusyError when the
 * pool's queue is full.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  const params = paramsOf(n, r, p);
  if (scheme !== "scrypt" || !params || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const key = await derive(password, Buffer.from(salt, "base64url"), params);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Whether `stored` was made with other parameters than the current ones (to hash again at the next sign-in). */
export const needsRehash = (stored: string): boolean => !stored.startsWith(prefixOf(SCRYPT_PARAMS));

/**
 * A stored hash at the current parameters that no password matches (a random key): checked against when the email is
 * unknown, so that the answer takes as long as for an account with a current hash.
 */
const DUMMY_HASH = `${prefixOf(SCRYPT_PARAMS)}${randomBytes(16).toString("base64url")}$${randomBytes(KEY_LENGTH).toString("base64url")}`;

/** {@link DUMMY_HASH}. */
export const dummyHash = (): string => DUMMY_HASH;
