// The keys kept in Redis and changed there by every writer, on any machine (KEYS_SYNC=shared): a change reads the
// version Redis holds, applies itself with the code the keys file uses, and writes the result with a compare-and-set
// on the change number (UPDATE_SCRIPT), reading again when another writer won the race; every machine then follows
// the new version into its own keys file. A Redis found empty is given a machine's copy first (the newest wins).
import { applyKeysChange, parseKeysText, renderKeysFile } from "./keys-file.ts";
import type { KeysFile } from "./keys-file.ts";
import { KeysUnavailableError } from "./keys-store.ts";
import type { KeysStore } from "./keys-store.ts";
import { readLocalCopy } from "./local-copy.ts";
import type { LocalCopy } from "./local-copy.ts";
import { digestOf, KEYS_CHANNEL, KEYS_DOC } from "./redis-keys.ts";
import type { KeysRedis } from "./redis-keys.ts";

/** How many times in a row a change may lose the race to other writers before it gives up. */
const MAX_ATTEMPTS = 100;
/** How long a change waits for Redis to be connected (at start, or while reconnecting), ms. */
const READY_WAIT_MS = 2_000;

const EMPTY = renderKeysFile({ format: 2, keys: [] });
/** What a writer with no keys file gives an empty Redis: no keys, at change 0 (any machine's copy outranks it). */
const NO_KEYS: LocalCopy = { text: EMPTY, digest: digestOf(EMPTY), change: 0 };

/**
 * The copy this machine should give Redis, if Redis holds no keys, or holds a copy given the same way that is older
 * than this one (SEED_SCRIPT decides again, atomically). `held` is what Redis was just seen to hold; `orEmpty`: a
 * machine without a keys file gives an empty set (a writer's first key) instead of nothing. Null: nothing to give.
 */
export async function copyToSeed(
  keysFile: string,
  held: { change: string | null | undefined; seeded: string | null | undefined },
  orEmpty: boolean,
): Promise<LocalCopy | null> {
  if (held.change != null && held.seeded !== "1") return null;
  const local = (await readLocalCopy(keysFile)) ?? (orEmpty ? NO_KEYS : null);
  if (!local || (held.change != null && Number(held.change) >= local.change)) return null;
  parseKeysText(local.text, keysFile); // never give Redis what followers would refuse
  return local;
}

/** Gives Redis `copy` (SEED_SCRIPT): whether it was taken. */
export const seedKeys = async (client: KeysRedis, copy: LocalCopy) =>
  (await client.seedKeys(KEYS_DOC, KEYS_CHANNEL, copy.change, copy.digest, copy.text)) === 1;

export interface SharedKeysOptions {
  client: KeysRedis;
  /** This machine's copy: given to an empty Redis, and kept up to date by `follow`. */
  keysFile: string;
  /** Brings the copy up to date with Redis, starting after it is called: a change is in the copy once it resolves. */
  follow: () => Promise<void>;
  /** This machine's copy was given to an empty Redis. */
  onSeeded?: (change: number) => void;
}

/** The store a KEYS_SYNC=shared process routes its changes of the keys to (src/keys/keys-store.ts). */
export function createSharedKeysStore(options: SharedKeysOptions): KeysStore {
  const { client, keysFile } = options;
  const unavailable = (err: unknown, what: string) =>
    new KeysUnavailableError(
      `the keys are kept in Redis (KEYS_SYNC=shared), which does not answer: ${what} (${(err as Error).message})`,
      { cause: err },
    );
  const ready = () =>
    client.status === "ready"
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const connected = () => {
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(() => {
            client.off("ready", connected);
            reject(unavailable(new Error(`not connected within ${READY_WAIT_MS} ms`), "nothing was changed"));
          }, READY_WAIT_MS);
          client.once("ready", connected);
        });

  /** A Redis command, its failure turned into KeysUnavailableError. */
  const ask = <R>(command: Promise<R>) =>
    command.catch((err: unknown) => Promise.reject(unavailable(err, "nothing was changed")));

  const attempt = async <T>(now: Date, change: (file: KeysFile) => T): Promise<T> => {
    await ready();
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const [held, seeded, text] = await ask(client.hmget(KEYS_DOC, "change", "seeded", "text"));
      // A writer never builds on an empty Redis, nor on a copy older than its own: it gives its own first.
      const copy = await copyToSeed(keysFile, { change: held, seeded }, true);
      if (copy) {
        if (await ask(seedKeys(client, copy))) options.onSeeded?.(copy.change);
        continue;
      }
      if (held == null || text == null) continue; // emptied meanwhile: given a copy at the next reading
      const file = parseKeysText(text, `Redis ${KEYS_DOC} change ${held}`);
      const result = applyKeysChange(file, now, change);
      const next = renderKeysFile(file);
      const digest = digestOf(next);
      let made: number;
      try {
        made = await client.updateKeys(KEYS_DOC, KEYS_CHANNEL, held, digest, next);
      } catch (err) {
        // Sent, and perhaps made: it was if Redis holds this very text now.
        const holds = await client.hget(KEYS_DOC, "digest").catch(() => null);
        if (holds !== digest) throw unavailable(err, "the change may have been made or not: look before trying again");
        made = 0;
      }
      if (made < 0) continue; // another writer changed the keys first: read them again
      await options.follow();
      return result;
    }
    throw new KeysUnavailableError(
      `the keys in Redis were changed by other writers ${MAX_ATTEMPTS} times in a row: nothing was changed, try again`,
    );
  };

  // One change at a time in this process: a change then races only with other processes' changes.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    update: (now, change) => {
      const run = queue.then(() => attempt(now, change));
      queue = run.catch(() => {});
      return run;
    },
  };
}
