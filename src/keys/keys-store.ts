// Where a change of the API keys goes. By default to the keys file itself, under its writers' lock; in a process
// started with KEYS_SYNC=shared, to the copy in Redis that every machine follows (src/keys/shared-keys.ts), routed by
// the keys file's path. Every writer (the portal's pages, `npm run keys`, `npm start`'s demo key) changes the keys
// through updateKeysFile with that path: routing there means none of them can write around Redis by mistake, and
// none of them has to know which store it writes to.
import { resolve } from "node:path";
import type { KeysFile } from "./keys-file.ts";

/** One way of changing the keys: apply a change to the current set and make the result the current set. */
export interface KeysStore {
  /**
   * Applies `change` to the current keys (it may be called more than once, on newer keys each time: it must change
   * nothing but the file it is given), drops grace periods ended at `now`, and makes the result current; returns
   * what `change` returned. What `change` throws is thrown, and nothing is changed.
   */
  update<T>(now: Date, change: (file: KeysFile) => T): Promise<T>;
}

/** The keys are kept in Redis (KEYS_SYNC=shared), which cannot be reached: the change was not made. */
export class KeysUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "KeysUnavailableError";
  }
}

const stores = new Map<string, KeysStore>();

/** From now on, changes of the keys file at `keysFile` made in this process go to `store`; call the result to stop. */
export function routeKeysChanges(keysFile: string, store: KeysStore): () => void {
  const path = resolve(keysFile);
  stores.set(path, store);
  return () => {
    if (stores.get(path) === store) stores.delete(path);
  };
}

/** The store changes of `keysFile` are routed to in this process, if any (else the file itself is changed). */
export function keysStoreFor(keysFile: string): KeysStore | undefined {
  return stores.size ? stores.get(resolve(keysFile)) : undefined;
}

/**
 * Beside a keys file that follows Redis (KEYS_SYNC=follow or shared): the change number of the version the file
 * holds, with its digest (`{"change":12,"digest":"<sha256 hex>"}`). It says which copy is newest when Redis has
 * lost the keys, and that the file is a copy: a change written to it directly would be overwritten.
 */
export const changeFileOf = (keysFile: string) => `${keysFile}.sync`;
