// API-key check: the key in the query string, hashed and looked up among the keys file's hashes.
import { ApiError } from "../errors.ts";
import type { KeyRecord } from "../keys/keys-file.ts";
import { hashKey, KEY_RE, loadKeysFile } from "../keys/keys-file.ts";

export interface KeyRing {
  /** Returns the name of the request's key, or throws a 401 that says whether it was missing or invalid. */
  authenticate(query: Map<string, string[]>): string;
  /** The record of a valid key, by name. */
  record(name: string): KeyRecord | undefined;
}

export function createKeyRing(records: readonly KeyRecord[]): KeyRing {
  const byHash = new Map<string, KeyRecord>();
  const byName = new Map<string, KeyRecord>();
  // Keys already found valid, so a key is hashed once per ring rather than once per request. Only valid keys are
  // kept (at most one entry per record), so guesses cannot grow it; a reload builds a new ring, forgetting revoked keys.
  const valid = new Map<string, string>();
  for (const r of records) {
    if (r.revoked) continue;
    byHash.set(r.hash, r);
    byName.set(r.name, r);
  }
  return {
    authenticate(query) {
      const values = query.get("apikey");
      if (values && values.length > 1) throw new ApiError(401, "api_key_invalid", "apikey must be given exactly once");
      if (!values || values.length === 0 || values[0] === "") {
        throw new ApiError(401, "api_key_missing", "this request needs an apikey query parameter");
      }
      const key = values[0]!;
      const known = valid.get(key);
      if (known) return known;
      if (!KEY_RE.test(key)) throw new ApiError(401, "api_key_invalid", "apikey must be 32 letters and digits");
      const record = byHash.get(hashKey(key));
      if (!record) throw new ApiError(401, "api_key_invalid", "apikey is not a valid key (unknown or revoked)");
      valid.set(key, record.name);
      return record.name;
    },
    record: (name) => byName.get(name),
  };
}

export async function loadKeyRing(path: string): Promise<KeyRing> {
  return createKeyRing((await loadKeysFile(path)).keys);
}
