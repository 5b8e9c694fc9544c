// API-key check: the key in the query string, hashed and looked up among the keys file's hashes.
import { ApiError } from "../errors.ts";
import type { KeyRecord } from "../keys/keys-file.ts";
import { hashKey, KEY_RE, loadKeysFile } from "../keys/keys-file.ts";

/** A valid key: its record's name, and the instant (epoch ms) it stops being valid (Infinity but for a replaced key). */
export interface Authenticated {
  name: string;
  until: number;
}

export interface KeyRing {
  /** The request's key at `nowMs`, or throws a 401 that says whether it was missing or invalid. */
  authenticate(query: Map<string, string[]>, nowMs: number): Authenticated;
  /** The record of a valid key, by name. */
  record(name: string): KeyRecord | undefined;
}

export function createKeyRing(records: readonly KeyRecord[]): KeyRing {
  const byHash = new Map<string, Authenticated>();
  const byName = new Map<string, KeyRecord>();
  // Keys already found valid, so a key is hashed once per ring rather than once per request. Only valid keys are
  // kept (at most one entry per hash), so guesses cannot grow it; a reload builds a new ring, forgetting revoked keys.
  const valid = new Map<string, Authenticated>();
  for (const r of records) {
    if (r.revoked) continue;
    byHash.set(r.hash, { name: r.name, until: Infinity });
    // A key replaced by `rotate` stays valid until its grace period ends, checked on every request (the file need not change).
    for (const p of r.previous ?? []) byHash.set(p.hash, { name: r.name, until: Date.parse(p.until) });
    byName.set(r.name, r);
  }
  const expired = new ApiError(
    401,
    "api_key_invalid",
    "apikey was replaced by a new key and its grace period has ended",
  );
  return {
    authenticate(query, nowMs) {
      const values = query.get("apikey");
      if (values && values.length > 1) throw new ApiError(401, "api_key_invalid", "apikey must be given exactly once");
      if (!values || values.length === 0 || values[0] === "") {
        throw new ApiError(401, "api_key_missing", "this request needs an apikey query parameter");
      }
      const key = values[0]!;
      const known = valid.get(key);
      if (known) {
        if (nowMs >= known.until) throw expired;
        return known;
      }
      if (!KEY_RE.test(key)) throw new ApiError(401, "api_key_invalid", "apikey must be 32 letters and digits");
      const found = byHash.get(hashKey(key));
      if (!found) throw new ApiError(401, "api_key_invalid", "apikey is not a valid key (unknown or revoked)");
      if (nowMs >= found.until) throw expired;
      valid.set(key, found);
      return found;
    },
    record: (name) => byName.get(name),
  };
}

export async function loadKeyRing(path: string): Promise<KeyRing> {
  return createKeyRing((await loadKeysFile(path)).keys);
}
