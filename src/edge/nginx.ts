// The push to deploy/nginx: a changed key's held checks purged from nginx's check cache (Debian's
// libnginx-mod-http-cache-purge, `PURGE /flash-sale-api-purge?<check query>`). nginx keys a check by the query as the
// client sent its keys, which the server cannot make from a hash, so the checks it held for a front are remembered
// here, by hash, and a push purges those of the changed hashes.
import type { Front, KeyState } from "./front.ts";
import { eachLimited, pushRequest } from "./http-push.ts";

/** The location of deploy/nginx that purges a check: its query is the check's. */
const NGINX_PURGE_PATH = "/flash-sale-api-purge";
/** Ways of sending one key remembered (apikey, X-Api-Key, Bearer, and mixes of them): a check beyond is held briefly. */
const QUERIES_PER_KEY = 8;
/** Checks remembered per front (each a query of about 50 bytes): 100,000 keys sent 4 ways, about 60 MB at most. */
const QUERIES_MAX = 400_000;
/** Purges in flight at once. */
const WIDTH = 16;

/** A front that holds a check only when it can be reached again by a push: remembers what it held. */
export interface RememberingFront extends Front {
  /** Records that the check `query` about `hash` is held; false when no room is left (hold it briefly instead). */
  remember(hash: string, query: string): boolean;
  /** Checks remembered now. */
  readonly remembered: number;
}

/**
 * How long a purged check stays remembered: the pusher pushes each change again a second later (src/edge/pusher.ts),
 * and that push purges it again (a check answered under the old keys may reach nginx's cache after the first purge).
 */
const FORGET_MS = 3_000;

/** deploy/nginx at `url` (http://host:port), named `name`. */
export function createNginxFront(name: string, url: string): RememberingFront {
  const held = new Map<string, Set<string>>();
  /** When each remembered check (`hash query`) was last purged, if it has not been held again since. */
  const purged = new Map<string, number>();
  let count = 0;
  const purge = (query: string) =>
    pushRequest("PURGE", `${url}${NGINX_PURGE_PATH}?${query}`, { "X-Edge-Front": name }, [200, 404]);
  const forget = (hash: string, q: string) => {
    const set = held.get(hash);
    if (set?.delete(q)) count--;
    if (set?.size === 0) held.delete(hash);
  };
  /** Purges the checks of `hashes`, each forgotten FORGET_MS later unless held again (one that fails stays). */
  const purgeHashes = async (hashes: Iterable<string>) => {
    const work: [string, string][] = [];
    for (const hash of hashes) for (const q of held.get(hash) ?? []) work.push([hash, q]);
    await eachLimited(work, WIDTH, async ([hash, q]) => {
      await purge(q);
      const at = performance.now();
      purged.set(`${hash} ${q}`, at);
      setTimeout(() => {
        if (purged.get(`${hash} ${q}`) !== at) return;
        purged.delete(`${hash} ${q}`);
        forget(hash, q);
      }, FORGET_MS).unref();
    });
  };
  return {
    name,
    get remembered() {
      return count;
    },
    remember(hash, query) {
      let set = held.get(hash);
      if (set?.has(query)) {
        purged.delete(`${hash} ${query}`); // held again: not forgotten
        return true;
      }
      if (count >= QUERIES_MAX || (set?.size ?? 0) >= QUERIES_PER_KEY) return false;
      if (!set) held.set(hash, (set = new Set()));
      set.add(query);
      count++;
      return true;
    },
    push: (changes: readonly KeyState[]) => purgeHashes(changes.map((c) => c.hash)),
    // Every check held for this front, whatever its key's state; first a purge of no check (nginx answers 404), so
    // that a front is in step only once it answers, even with nothing to purge.
    resync: async () => {
      await purge("-");
      await purgeHashes([...held.keys()]);
    },
  };
}
