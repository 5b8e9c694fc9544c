// Keys across machines through Redis (KEYS_SYNC, with REDIS_URL). `publish`: the machine whose keys file is the source
// (where the portal and `npm run keys` write it) publishes each version of the file; `follow`: API servers on other
// machines write each version to their own keys file, which their reloader then applies as it applies any change;
// `shared`: Redis's copy is the source, changed there by every writer on any machine (src/keys/shared-keys.ts), and
// followed into each machine's keys file, which is given to Redis again if Redis is found empty. Nothing on a
// request's path touches Redis, and a follower that cannot reach it keeps the keys file it has. Under `shared`, a
// version whose history does not descend from the machine's copy (src/keys/history.ts) is refused, and the machine
// gives Redis the revocations its copy holds (src/keys/tombstones.ts).
import { watch } from "node:fs";
import type { FSWatcher } from "node:fs";
import { readFile, rm, stat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { Redis } from "ioredis";
import { descends, parseHistory } from "./history.ts";
import type { Version } from "./history.ts";
import { parseKeysText } from "./keys-file.ts";
import { changeFileOf } from "./keys-store.ts";
import type { KeysStore } from "./keys-store.ts";
import { readLocalCopy, writeLocalCopy } from "./local-copy.ts";
import type { LocalCopy } from "./local-copy.ts";
import { connectKeysRedis, digestOf, KEYS_CHANNEL, KEYS_DOC, keysRedisOptions } from "./redis-keys.ts";
import type { KeysRedis } from "./redis-keys.ts";
import { copyToSeed, createSharedKeysStore, HELD_FIELDS, heldOf, seedKeys } from "./shared-keys.ts";
import type { SharedKeysStore } from "./shared-keys.ts";
import { applyTombstones, tombstonesOf } from "./tombstones.ts";

/** How often a publisher compares its file with Redis, and a follower Redis with its file, ms (besides announcements). */
const DEFAULT_SYNC_INTERVAL = 1_000;
export type KeySyncRole = "publish" | "follow" | "shared";

/** Where a process stands with Redis, for the log and the metrics. */
export interface KeySyncStatus {
  role: KeySyncRole;
  /** Redis answered the last comparison (and a follower's file holds the change it announced). */
  synced: boolean;
  /** The change number last published or applied (0: none yet). */
  change: number;
  /** When the keys were last known to be in step with Redis, epoch ms (0: never). */
  syncedAt: number;
  /** Versions found in Redis whose history does not descend from this machine's copy, refused so far. */
  refused: number;
}

export interface KeySync {
  status(): KeySyncStatus;
  /** Compares with Redis, starting now; resolves once done (a publisher: published; a follower: applied). */
  sync(): Promise<void>;
  /** `shared`: where this process's changes of the keys go (src/keys/keys-store.ts); null for the other roles. */
  store: KeysStore | null;
  close(): Promise<void>;
}

export interface KeySyncOptions {
  redisUrl: string;
  keysFile: string;
  role: KeySyncRole;
  /** See DEFAULT_SYNC_INTERVAL. */
  interval?: number;
  /** A follower wrote a new version of the keys file (the server reloads it then, not at its next poll). */
  onApplied?: (change: number) => void;
  /** Redis answers again (or for the first time). */
  onSynced?: (status: KeySyncStatus) => void;
  /** Redis cannot be reached, or what it holds cannot be used: once until it answers again. */
  onUnavailable?: (err: unknown, status: KeySyncStatus) => void;
  /** `shared`: Redis held no keys (or an older copy), and was given this machine's keys file, at change `change`. */
  onSeeded?: (change: number) => void;
  /**
   * `follow`: Redis holds other keys under a change number below the one this machine had (`had`: applied by this
   * process, or recorded beside its keys file): a Redis restored from an older copy, or emptied and given another
   * file. They are applied as they are (the publisher's file is the source, and it publishes again on its next look),
   * and this says so once, as a key revoked since may be valid again meanwhile.
   */
  onBackwards?: (change: number, had: number) => void;
  /**
   * Redis holds a version (`change`) whose history does not descend from this machine's copy (`had`: its change):
   * refused, the copy kept. Once for each history refused (a version made on the same one is refused silently).
   */
  onRefused?: (change: number, had: number) => void;
  /** `shared`: after a refusal, `count` keys revoked in this machine's copy were revoked in Redis's keys too. */
  onRevocationsGiven?: (count: number, change: number) => void;
  /** The clock, epoch ms. Default Date.now. */
  clock?: () => number;
}

/** Starts publishing or following; never throws for Redis being away (it is reported, and tried again). */
export function startKeySync(options: KeySyncOptions): KeySync {
  const clock = options.clock ?? Date.now;
  const { keysFile, role } = options;
  const client = connectKeysRedis(options.redisUrl, role);
  const state: KeySyncStatus = { role, synced: false, change: 0, syncedAt: 0, refused: 0 };
  let reported = false; // whether this outage was reported
  let closed = false;
  const ok = (change: number) => {
    refusals.forget();
    const was = state.synced;
    Object.assign(state, { synced: true, change, syncedAt: clock() });
    reported = false;
    if (!was) options.onSynced?.({ ...state });
  };
  const failed = (err: unknown) => {
    state.synced = false;
    if (!reported && !closed) {
      reported = true;
      options.onUnavailable?.(err, { ...state });
    }
  };
  const context: SyncContext = {
    options,
    client,
    clock,
    state,
    readLocal: createLocalReader(keysFile, role),
    ok,
    failed,
  };
  const refusals = createRefusals(context, () => store);
  const step = role === "publish" ? createPublishStep(context) : createFollowStep(context, refusals.refuse);

  // One comparison at a time. One asked for while another runs starts after it (the running one may have read too
  // early), and is shared by every call made meanwhile.
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const sync = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (running) {
      next ??= running.then(() => {
        next = null;
        return sync();
      });
      return next;
    }
    running = step()
      .catch(failed)
      .finally(() => {
        running = null;
      });
    return running;
  };

  // Where this process's changes go under `shared`; a refusal gives Redis this machine's revocations through it too.
  const store =
    role === "shared"
      ? createSharedKeysStore({
          client,
          keysFile,
          follow: sync,
          ...(options.onSeeded ? { onSeeded: options.onSeeded } : {}),
        })
      : null;

  // A publisher's file is the source: a change number left beside it by following would refuse its writers.
  const prepared = role === "publish" ? rm(changeFileOf(keysFile), { force: true }).catch(() => {}) : Promise.resolve();
  client.on("ready", () => void prepared.then(sync));
  const timer = setInterval(() => void sync(), options.interval ?? DEFAULT_SYNC_INTERVAL);
  timer.unref();
  // A publisher also looks as soon as the file is replaced; a follower hears of a change on the channel.
  const watcher = role === "publish" ? watchKeysFile(keysFile, sync) : null;
  const subscriber = role === "publish" ? null : subscribeToChanges(options.redisUrl, role, sync);

  return {
    status: () => ({ ...state }),
    sync,
    store,
    close: async () => {
      closed = true;
      clearInterval(timer);
      watcher?.close();
      await running;
      await next;
      client.disconnect();
      subscriber?.disconnect();
    },
  };
}

/** What the steps of one KeySync share: its options, connection and status, and how they are reported. */
interface SyncContext {
  options: KeySyncOptions;
  client: KeysRedis;
  clock: () => number;
  state: KeySyncStatus;
  readLocal: (keep: boolean) => Promise<LocalFile>;
  /** In step with Redis at `change`: every refusal forgotten, and onSynced if it was not. */
  ok: (change: number) => void;
  /** Redis away, or what it holds unusable: onUnavailable, once until in step again. */
  failed: (err: unknown) => void;
}

/** The local keys file as last read: when it was replaced (its fingerprint), its digest, and its text if kept. */
interface LocalFile {
  fingerprint: string;
  digest: string;
  text: string | null;
}

/** Reads the keys file, again only when it has been replaced (a new inode, size or time); its text kept if `keep`. */
function createLocalReader(keysFile: string, role: KeySyncRole) {
  let local: LocalFile | null = null;
  return async (keep: boolean) => {
    const fingerprint = await stat(keysFile).then(
      (s) => `${s.mtimeMs}:${s.size}:${s.ino}`,
      (err: NodeJS.ErrnoException) => {
        // A follower without a file yet has nothing to keep; a publisher must not publish a file that is not there.
        if (err.code === "ENOENT" && role !== "publish") return "";
        throw err;
      },
    );
    if (local?.fingerprint !== fingerprint || (keep && local.text === null)) {
      const text = fingerprint ? await readFile(keysFile, "utf8") : "";
      local = { fingerprint, digest: digestOf(text), text: keep ? text : null };
    }
    return local;
  };
}

/** The publisher's step: the file as it is now, published unless Redis holds it already. */
function createPublishStep({ options, client, readLocal, ok }: SyncContext) {
  const { keysFile } = options;
  let checked = ""; // the digest of the last text found valid: checked once, not at every comparison
  return async () => {
    const file = await readLocal(true);
    if (checked !== file.digest) parseKeysText(file.text!, keysFile); // never publish what followers refuse
    checked = file.digest;
    const [change, digest] = await client.hmget(KEYS_DOC, "change", "digest");
    if (digest === file.digest && change) return ok(Number(change));
    ok(await client.publishKeys(KEYS_DOC, KEYS_CHANNEL, file.digest, file.text!));
  };
}

/** The follower's step (`follow` and `shared`): the version Redis holds, written to the local file if it differs. */
function createFollowStep(
  { options, client, readLocal, ok }: SyncContext,
  refuse: (own: LocalCopy, version: Version) => void,
) {
  const { keysFile, role } = options;
  /** The change number recorded beside the keys file by this process (-1: none yet): recorded again when it moves. */
  let recorded = -1;
  /** The history recorded with it by this process (its JSON, as Redis holds it): recorded again when it changes. */
  let recordedHistory: string | null | undefined;
  const follow = async (attempts = 3): Promise<void> => {
    const held = heldOf(await client.hmget(KEYS_DOC, ...HELD_FIELDS));
    if (role === "shared") {
      // Redis holds no keys, or an older version of this machine's copy: the copy is given to it (if it has one).
      const copy = await copyToSeed(keysFile, held, false);
      if (copy && (await seedKeys(client, held, copy))) options.onSeeded?.(copy.change);
      if (copy) return follow(attempts);
    }
    const { digest, history } = held;
    const change = Number(held.change);
    if (!digest || !Number.isSafeInteger(change)) throw new Error(`no keys are published in Redis (${KEYS_DOC})`);
    // Before this process applied anything, the number recorded beside the file by an earlier one.
    if (recorded < 0) recorded = (await readLocalCopy(keysFile).catch(() => null))?.change ?? -1;
    const version: Version = { change, digest, history: parseHistory(history) };
    if ((await readLocal(false)).digest === digest) {
      if (recorded !== change || recordedHistory !== history)
        await writeLocalCopy(keysFile, { change, digest, history: version.history });
      recorded = change;
      recordedHistory = history;
      return ok(change);
    }
    // Read from the file (not remembered): another process of this machine may have moved the copy.
    const own = await readLocalCopy(keysFile);
    if (own && !descends(own, version)) return refuse(own, version);
    const text = await client.hget(KEYS_DOC, "text");
    if (text === null || digestOf(text) !== digest) {
      // Replaced between the two reads: read again (a few times); text that is not what its digest says: refused.
      if (attempts > 1) return follow(attempts - 1);
      throw new Error(`Redis ${KEYS_DOC} holds text whose digest is not the one published with it`);
    }
    parseKeysText(text, `Redis ${KEYS_DOC} change ${change}`);
    if (change < recorded) options.onBackwards?.(change, recorded);
    await writeLocalCopy(keysFile, { change, digest, text, history: version.history });
    recorded = change;
    recordedHistory = history;
    ok(change);
    options.onApplied?.(change);
  };
  return follow;
}

/**
 * Versions refused (their history does not descend from this machine's copy): counted, said once for each history,
 * and (`shared`) answered by giving Redis the revocations the copy holds, through `store`; forgotten once in step.
 */
function createRefusals({ options, clock, state, failed }: SyncContext, store: () => SharedKeysStore | null) {
  /** The histories (their latest epoch) and versions refused since last in step: each reported, and answered, once. */
  const refusedHistories = new Set<string>();
  const refusedVersions = new Set<string>();
  /** The refused versions given this machine's revocations (each once), and the giving under way. */
  const given = new Set<string>();
  let giving: Promise<void> | null = null;
  return {
    forget: () => {
      refusedHistories.clear();
      refusedVersions.clear();
      given.clear();
    },
    /**
     * Keeps the copy, says so once for each history refused, and (`shared`) gives Redis the revocations the copy
     * holds, as a change of Redis's keys made apart from this comparison (which it would otherwise wait for): one at
     * a time, tried again at the next comparison until it is made.
     */
    refuse: (own: LocalCopy, version: Version) => {
      state.synced = false;
      if (!refusedVersions.has(version.digest)) {
        refusedVersions.add(version.digest);
        state.refused++;
        const epoch = version.history?.epochs.at(-1)?.epoch ?? version.digest;
        if (!refusedHistories.has(epoch)) {
          refusedHistories.add(epoch);
          options.onRefused?.(version.change, own.change);
        }
      }
      const shared = store();
      if (!shared || giving || given.has(version.digest)) return;
      const tombstones = tombstonesOf(parseKeysText(own.text, options.keysFile));
      giving = shared
        .updateAnyHistory(new Date(clock()), (file) => applyTombstones(file, tombstones))
        .then((count) => {
          given.add(version.digest);
          if (count > 0) options.onRevocationsGiven?.(count, version.change);
        })
        .catch(failed)
        .finally(() => (giving = null));
    },
  };
}

/** A publisher looks as soon as its keys file is replaced (null: it cannot watch, and looks at the interval alone). */
function watchKeysFile(keysFile: string, sync: () => Promise<void>): FSWatcher | null {
  try {
    const name = basename(keysFile);
    const watcher = watch(dirname(keysFile), { persistent: false }, (_e, changed) => {
      if (changed === null || changed === name) void sync();
    });
    watcher.on("error", () => watcher.close());
    return watcher;
  } catch {
    return null; // the interval alone
  }
}

/** A follower hears of a change on the channel, through a connection of its own (subscribed whenever it is ready). */
function subscribeToChanges(redisUrl: string, role: KeySyncRole, sync: () => Promise<void>): Redis {
  const subscriber = new Redis(redisUrl, {
    ...keysRedisOptions(role),
    autoResubscribe: false,
    commandTimeout: undefined,
  });
  subscriber.on("error", () => {});
  subscriber.on(
    "ready",
    () =>
      void subscriber.subscribe(KEYS_CHANNEL).then(
        () => sync(),
        () => {},
      ),
  );
  subscriber.on("message", () => void sync());
  return subscriber;
}
