// Revocations given back to Redis (KEYS_SYNC=shared). A revoked key's record stays in the keys file for a while (its
// tombstone, KEEP_REVOKED_MS). When a machine finds in Redis keys whose history does not descend from its own copy
// (a Redis that lost its data was given an older machine's copy, and built on), it refuses them, and gives Redis
// every revocation its copy holds, as a change of Redis's keys: so no key revoked on one machine is valid again on
// the others because another machine had not heard of the revocation.
import type { KeysFile } from "./keys-file.ts";

/** A revoked key as a machine's copy records it. */
export interface Tombstone {
  name: string;
  hash: string;
  revoked: string;
}

/** The revoked keys of `file`. */
export const tombstonesOf = (file: KeysFile): Tombstone[] =>
  file.keys.flatMap((k) => (k.revoked ? [{ name: k.name, hash: k.hash, revoked: k.revoked }] : []));

/**
 * Revokes (in place) every live key of `file` that one of `tombstones` revoked: the same key (by its hash or a hash
 * it replaced), or a key of the same name made before the revocation (the same key, rotated elsewhere). A key made
 * under that name after it is another key, and stays. Returns the number of keys revoked.
 */
export function applyTombstones(file: KeysFile, tombstones: readonly Tombstone[]): number {
  const byHash = new Map(tombstones.map((t) => [t.hash, t]));
  const byName = new Map(tombstones.map((t) => [t.name, t]));
  let count = 0;
  for (const record of file.keys) {
    if (record.revoked) continue;
    const named = byName.get(record.name);
    const tombstone =
      [record.hash, ...(record.previous ?? []).map((p) => p.hash)].map((h) => byHash.get(h)).find(Boolean) ??
      (named && Date.parse(record.created) <= Date.parse(named.revoked) ? named : undefined);
    if (!tombstone) continue;
    record.revoked = tombstone.revoked;
    delete record.previous;
    count++;
  }
  return count;
}
