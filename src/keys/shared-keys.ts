// The keys kept in Redis and changed there by every writer, on any machine (KEYS_SYNC=shared): a change reads the
// version Redis holds, applies itself with the code the keys file uses, and writes the result with a compare-and-set
// on the change number (UPDATE_SCRIPT), reading again when another writer won the race; every machine then follows
// the new version into its own keys file. A Redis found empty, or behind a machine's copy, is given that copy first;
// a writer whose copy Redis's keys do not descend from changes nothing (src/keys/history.ts).
import { descends, givenHistory, isAncestor, nextHistory, parseHistory } from "./history.ts";
import type { Version } from "./history.ts";
import { applyKeysChange, parseKeysText, renderKeysFile } from "./keys-file.ts";
import type { KeysFile } from "./keys-file.ts";
import { KeysUnavailableError } from "./keys-store.ts";
import type { KeysStore } from "./keys-store.ts";
import { readLocalCopy } from "./local-copy.ts";
import type { LocalCopy } from "./local-copy.ts";
import { answered, COMMAND_DEADLINE_MS, digestOf, KEYS_CHANNEL, KEYS_DOC } from "./redis-keys.ts";
import type { KeysRedis } from "./redis-keys.ts";

/** How many times in a row a change may lose the race to other writers before it gives up. */
const MAX_ATTEMPTS = 100;
/** How long a change waits for Redis to be connected (at start, or while reconnecting), ms. */
const READY_WAIT_MS = 2_000;

const EMPTY = renderKeysFile({ format: 2, keys: [] });
/** What a writer with no keys file gives an empty Redis: no keys, at change 0 (any machine's copy outranks it). */
const NO_KEYS: LocalCopy = { text: EMPTY, digest: digestOf(EMPTY), change: 0 };

/** What Redis holds, read in one HMGET (every field null: it holds no keys). */
export interface Held {
  change: string | null;
  digest: string | null;
  seeded: string | null;
  history: string | null;
}
/** The fields of KEYS_DOC that make a Held, in its order, for HMGET. */
export const HELD_FIELDS = ["change", "digest", "seeded", "history"] as const;
export const heldOf = ([change, digest, seeded, history]: (string | null)[]): Held => ({
  change: change ?? null,
  digest: digest ?? null,
  seeded: seeded ?? null,
  history: history ?? null,
});

/** The version Redis holds, or null when it holds none. */
function heldVersion(held: Held): Version | null {
  const change = Number(held.change);
  if (held.change === null || held.digest === null || !Number.isSafeInteger(change)) return null;
  return { change, digest: held.digest, history: parseHistory(held.history) };
}

/**
 * The copy this machine should give Redis, if Redis holds no keys, or holds a version in the history of this copy
 * (an older one: Redis restarted from an older snapshot, or given an older machine's copy that nobody has changed
 * yet); else, when either has no history, a copy given the same way with a lower change number that nobody has
 * changed yet. SEED_SCRIPT checks that Redis still holds `held`. `orEmpty`: a machine
 * without a keys file gives an empty set (a writer's first key) instead of nothing; `read`: the copy as the caller
 * read it (default: read here). Null: nothing to give.
 */
export async function copyToSeed(
  keysFile: string,
  held: Held,
  orEmpty: boolean,
  read?: LocalCopy | null,
): Promise<LocalCopy | null> {
  const local = (read === undefined ? await readLocalCopy(keysFile) : read) ?? (orEmpty ? NO_KEYS : null);
  const version = heldVersion(held);
  if (!local || version?.digest === local.digest) return null;
  if (version) {
    // A copy given without a history (by older code, or a writer's empty set) is outranked by change numbers alone.
    const known = version.history && local.history && !(held.seeded === "1" && version.history.epochs.length === 1);
    const behind = known
      ? isAncestor(version, local) && version.change < local.change
      : held.seeded === "1" && version.change < local.change;
    if (!behind) return null;
  }
  parseKeysText(local.text, keysFile); // never give Redis what followers would refuse
  return local;
}

/** Gives Redis `copy` (SEED_SCRIPT), with a history of its own, if Redis still holds `held`: whether it was taken. */
export const seedKeys = async (client: KeysRedis, held: Held, copy: LocalCopy) =>
  (await client.seedKeys(
    KEYS_DOC,
    KEYS_CHANNEL,
    held.change ?? "",
    held.digest ?? "",
    copy.change,
    copy.digest,
    copy.text,
    JSON.stringify(givenHistory(copy)),
  )) === 1;

/** Redis's keys do not descend from this machine's copy: a change was refused, and nothing was changed. */
class KeysForkedError extends KeysUnavailableError {
  constructor(held: Version, own: Version) {
    super(
      `the keys in Redis (change ${held.change}) do not descend from this machine's copy (change ${own.change}): nothing was changed; see keys_copy_refused in the log`,
    );
    this.name = "KeysForkedError";
  }
}

export interface SharedKeysOptions {
  client: KeysRedis;
  /** This machine's copy: given to an empty Redis, and kept up to date by `follow`. */
  keysFile: string;
  /** Brings the copy up to date with Redis, starting after it is called: a change is in the copy once it resolves. */
  follow: () => Promise<void>;
  /** This machine's copy was given to an empty Redis. */
  onSeeded?: (change: number) => void;
  /** How long a change waits for each Redis command's answer, ms (default COMMAND_DEADLINE_MS). */
  deadlineMs?: number;
}

/** The store of a KEYS_SYNC=shared process. */
export interface SharedKeysStore extends KeysStore {
  /**
   * Makes a change on whatever Redis holds, whether or not it descends from this machine's copy: for changes that
   * only ever refuse keys (this machine's revocations given to a Redis that lost them, src/keys/tombstones.ts).
   */
  updateAnyHistory<T>(now: Date, change: (file: KeysFile) => T): Promise<T>;
}

/** The store a KEYS_SYNC=shared process routes its changes of the keys to (src/keys/keys-store.ts). */
export function createSharedKeysStore(options: SharedKeysOptions): SharedKeysStore {
  const { client, keysFile } = options;
  const deadline = options.deadlineMs ?? COMMAND_DEADLINE_MS;
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
    answered(command, deadline).catch((err: unknown) => Promise.reject(unavailable(err, "nothing was changed")));

  const attempt = async <T>(now: Date, change: (file: KeysFile) => T, anyHistory: boolean): Promise<T> => {
    await ready();
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const [text, ...fields] = await ask(client.hmget(KEYS_DOC, "text", ...HELD_FIELDS));
      const held = heldOf(fields);
      // The copy read once an attempt: read twice, this machine's follower could move it on between the reads (past
      // the version just read from Redis), and that version would look like one this copy does not descend from.
      const local = await readLocalCopy(keysFile);
      // A writer never builds on an empty Redis, nor on a version older than its own copy: it gives its own first.
      const copy = await copyToSeed(keysFile, held, true, local);
      if (copy) {
        if (await ask(seedKeys(client, held, copy))) options.onSeeded?.(copy.change);
        continue;
      }
      const version = heldVersion(held);
      if (!version || text == null) continue; // emptied meanwhile: given a copy at the next reading
      // Nor on keys whose history its copy is not in: the change would be lost to this machine, which refuses them.
      const own = anyHistory ? null : local;
      if (own && !descends(own, version)) {
        // Redis's version is older than this copy, which descends from it: Redis was read before the follower moved
        // the copy on. Not a fork: read Redis again.
        if (isAncestor(version, own)) continue;
        throw new KeysForkedError(version, own);
      }
      const file = parseKeysText(text, `Redis ${KEYS_DOC} change ${held.change}`);
      const before = renderKeysFile(file);
      const result = applyKeysChange(file, now, change);
      const next = renderKeysFile(file);
      if (next === before) {
        await options.follow(); // no new version; the copy as up to date as after a change
        return result;
      }
      const digest = digestOf(next);
      let made: number;
      try {
        const history = JSON.stringify(nextHistory(version, digest));
        made = await answered(client.updateKeys(KEYS_DOC, KEYS_CHANNEL, held.change!, digest, next, history), deadline);
      } catch (err) {
        // Sent, and perhaps made: it was if Redis holds this very text now.
        const holds = await answered(client.hget(KEYS_DOC, "digest"), deadline).catch(() => null);
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
  const queued = <T>(now: Date, change: (file: KeysFile) => T, anyHistory: boolean) => {
    const run = queue.then(() => attempt(now, change, anyHistory));
    queue = run.catch(() => {});
    return run;
  };
  return {
    update: (now, change) => queued(now, change, false),
    updateAnyHistory: (now, change) => queued(now, change, true),
  };
}
