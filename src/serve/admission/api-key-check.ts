// API-key check: the key a request presents (presented-key.ts: the query string or a header), hashed and looked up
// among the keys file's hashes.
import { ApiError } from "../../errors.ts";
import type { KeyRecord } from "../../keys/keys-file.ts";
import { hashKey, KEY_RE } from "../../keys/keys-file.ts";
import { PREVIOUS_SUFFIX } from "../../usage/meter.ts";

/** A valid key: its record's name, and the instant (epoch ms) it stops being valid (Infinity but for a replaced key). */
interface Authenticated {
  name: string;
  until: number;
  /** The name its requests are counted and logged under: `name`, with PREVIOUS_SUFFIX for a replaced key. */
  usage: string;
}

export interface KeyRing {
  /** The presented `key` at `nowMs`, or the 401 that says why it is not valid (returned: see below). */
  check(key: string, nowMs: number): Authenticated | ApiError;
  /** The presented `key` at `nowMs`, or throws the 401 that `check` returns. */
  authenticate(key: string, nowMs: number): Authenticated;
  /** The record of a valid key, by name. */
  record(name: string): KeyRecord | undefined;
}

// The answers to an invalid key, made once: rejections are returned rather than thrown, and are the same
// objects every time (their rendering is then made once, in respond.ts). A throw cost more than the rest of a 401.
const MALFORMED = new ApiError(401, "api_key_invalid", "apikey must be 32 letters and digits");
const UNKNOWN = new ApiError(401, "api_key_invalid", "apikey is not a valid key (unknown or revoked)");
const SUSPENDED = new ApiError(
  401,
  "api_key_suspended",
  "apikey belongs to a suspended account: the API's operator suspended it, and its keys are refused until it is reinstated",
);
const UNKNOWN_MAX = 512;

export function createKeyRing(records: readonly KeyRecord[]): KeyRing {
  const byHash = new Map<string, Authenticated>();
  const byName = new Map<string, KeyRecord>();
  // Keys already found valid, so a key is hashed once per ring rather than once per request. Only valid keys are
  // kept (at most one entry per hash), so guesses cannot grow it; a reload builds a new ring, forgetting revoked keys.
  const valid = new Map<string, Authenticated>();
  // Well-formed keys found unknown, bounded (emptied when full); a reload builds a new ring, so a key created since
  // is never refused from here.
  const unknown = new Set<string>();
  // A suspended account's keys (the portal's operator), refused until it is reinstated: looked up only when a key is
  // not among the valid ones, so a valid key's request costs what it did. Its answer says it is suspended.
  const suspended = new Map<string, number>();
  const suspendedSeen = new Set<string>();
  for (const r of records) {
    if (r.revoked) continue;
    if (r.suspended) {
      suspended.set(r.hash, Infinity);
      for (const p of r.previous ?? []) suspended.set(p.hash, Date.parse(p.until));
      continue;
    }
    byHash.set(r.hash, { name: r.name, until: Infinity, usage: r.name });
    // A key replaced by `rotate` stays valid until its grace period ends, checked on every request (the file need not
    // change); its use is counted apart, so that a partner sees when it stopped being used.
    const usage = r.name + PREVIOUS_SUFFIX;
    for (const p of r.previous ?? []) byHash.set(p.hash, { name: r.name, until: Date.parse(p.until), usage });
    byName.set(r.name, r);
  }
  const expired = new ApiError(
    401,
    "api_key_invalid",
    "apikey was replaced by a new key and its grace period has ended",
  );
  const check = (key: string, nowMs: number): Authenticated | ApiError => {
    const known = valid.get(key);
    if (known) return nowMs >= known.until ? expired : known;
    if (!KEY_RE.test(key)) return MALFORMED;
    if (unknown.has(key)) return UNKNOWN;
    if (suspendedSeen.has(key)) return SUSPENDED;
    const hash = hashKey(key);
    const found = byHash.get(hash);
    if (!found && suspended.size > 0) {
      const until = suspended.get(hash);
      if (until !== undefined) {
        if (nowMs >= until) return expired;
        if (suspendedSeen.size >= UNKNOWN_MAX) suspendedSeen.clear();
        if (until === Infinity) suspendedSeen.add(key); // a replaced key's grace may end: looked up again
        return SUSPENDED;
      }
    }
    if (!found) {
      // A client that keeps sending a wrong key is answered without hashing it again (a few hundred at most remembered).
      if (unknown.size >= UNKNOWN_MAX) unknown.clear();
      unknown.add(key);
      return UNKNOWN;
    }
    if (nowMs >= found.until) return expired;
    valid.set(key, found);
    return found;
  };
  return {
    check,
    authenticate(key, nowMs) {
      const found = check(key, nowMs);
      if (found instanceof ApiError) throw found;
      return found;
    },
    record: (name) => byName.get(name),
  };
}
