// Keys across machines through Redis (KEYS_SYNC, with REDIS_URL): the machine whose keys file is the source (where
// the portal and `npm run keys` write it) publishes each version of the file; API servers on other machines follow,
// writing each version to their own keys file, which their reloader then applies as it applies any change. Nothing
// on a request's path touches Redis, and a follower that cannot reach it keeps the keys file it has.
import { createHash } from "node:crypto";
import { watch } from "node:fs";
import type { FSWatcher } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { Redis } from "ioredis";
import { parseKeysText, writeKeysText } from "./keys-file.ts";
import { acquireKeysLock } from "./keys-lock.ts";

/** The Redis hash holding the published keys file: `change` (a counter), `digest` (sha256 of `text`) and `text`. */
const KEYS_DOC = "flash-sale-api:keys";
/** Where each new change is announced, as "<change> <digest>". */
const KEYS_CHANNEL = "flash-sale-api:keys:changed";
/** How often a publisher compares its file with Redis, and a follower Redis with its file, ms (besides announcements). */
const DEFAULT_SYNC_INTERVAL = 1_000;
/** A Redis command not answered within this time counts as Redis being unreachable, ms. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * Publishes ARGV[2] (a keys file's text, digest ARGV[1]) unless it is what Redis holds: a new change number, and an
 * announcement. So many publishers of one file (workers, the portal) make one change, and a Redis that lost its data
 * (restarted empty) is given the file again by the next comparison.
 */
const PUBLISH_SCRIPT = `
if redis.call('HGET', KEYS[1], 'digest') == ARGV[1] then return tonumber(redis.call('HGET', KEYS[1], 'change')) end
local change = redis.call('HINCRBY', KEYS[1], 'change', 1)
redis.call('HSET', KEYS[1], 'digest', ARGV[1], 'text', ARGV[2])
redis.call('PUBLISH', KEYS[2], change .. ' ' .. ARGV[1])
return change
`;

export type KeySyncRole = "publish" | "follow";

/** Where a process stands with Redis, for the log and the metrics. */
export interface KeySyncStatus {
  role: KeySyncRole;
  /** Redis answered the last comparison (and a follower's file holds the change it announced). */
  synced: boolean;
  /** The change number last published or applied (0: none yet). */
  change: number;
  /** When the keys were last known to be in step with Redis, epoch ms (0: never). */
  syncedAt: number;
}

export interface KeySync {
  status(): KeySyncStatus;
  /** Compares with Redis now; resolves once done (a publisher: published; a follower: applied). */
  sync(): Promise<void>;
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
  /** The clock, epoch ms. Default Date.now. */
  clock?: () => number;
}

const digestOf = (text: string) => createHash("sha256").update(text).digest("hex");

type PublishingRedis = Redis & {
  publishKeys(doc: string, channel: string, digest: string, text: string): Promise<number>;
};

/** Starts publishing or following; never throws for Redis being away (it is reported, and tried again). */
export function startKeySync(options: KeySyncOptions): KeySync {
  const clock = options.clock ?? Date.now;
  const redisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
    retryStrategy: (times: number) => Math.min(100 * times, 1_000),
    connectionName: `flash-sale-api-keys-${options.role}`,
  };
  const client = new Redis(options.redisUrl, redisOptions) as PublishingRedis;
  client.defineCommand("publishKeys", { numberOfKeys: 2, lua: PUBLISH_SCRIPT });
  client.on("error", () => {}); // every failure is seen by the comparison that meets it
  const state: KeySyncStatus = { role: options.role, synced: false, change: 0, syncedAt: 0 };
  let reported = false; // whether this outage was reported
  let closed = false;
  /** The local file's text, read again only when it has been replaced (a new inode, size or time): its digest. */
  let local: { fingerprint: string; digest: string; text: string | null } | null = null;
  const readLocal = async (keep: boolean) => {
    const fingerprint = await stat(options.keysFile).then(
      (s) => `${s.mtimeMs}:${s.size}:${s.ino}`,
      (err: NodeJS.ErrnoException) => {
        // A follower without a file yet has nothing to keep; a publisher must not publish a file that is not there.
        if (err.code === "ENOENT" && options.role === "follow") return "";
        throw err;
      },
    );
    if (local?.fingerprint !== fingerprint || (keep && local.text === null)) {
      const text = fingerprint ? await readFile(options.keysFile, "utf8") : "";
      local = { fingerprint, digest: digestOf(text), text: keep ? text : null };
    }
    return local;
  };

  const ok = (change: number) => {
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

  /** The publisher's step: the file as it is now, published unless Redis holds it already. */
  let checked = ""; // the digest of the last text found valid: checked once, not at every comparison
  const publish = async () => {
    const file = await readLocal(true);
    if (checked !== file.digest) parseKeysText(file.text!, options.keysFile); // never publish what followers refuse
    checked = file.digest;
    const [change, digest] = await client.hmget(KEYS_DOC, "change", "digest");
    if (digest === file.digest && change) return ok(Number(change));
    ok(await client.publishKeys(KEYS_DOC, KEYS_CHANNEL, file.digest, file.text!));
  };

  /** The follower's step: the version Redis holds, written to the local file if it differs. */
  const follow = async (attempts = 3): Promise<void> => {
    const [changeText, digest] = await client.hmget(KEYS_DOC, "change", "digest");
    const change = Number(changeText);
    if (!digest || !Number.isSafeInteger(change)) throw new Error(`no keys are published in Redis (${KEYS_DOC})`);
    if ((await readLocal(false)).digest === digest) return ok(change);
    const text = await client.hget(KEYS_DOC, "text");
    if (text === null || digestOf(text) !== digest) {
      // Replaced between the two reads: read again (a few times); text that is not what its digest says: refused.
      if (attempts > 1) return follow(attempts - 1);
      throw new Error(`Redis ${KEYS_DOC} holds text whose digest is not the one published with it`);
    }
    parseKeysText(text, `Redis ${KEYS_DOC} change ${change}`);
    const release = await acquireKeysLock(options.keysFile);
    try {
      await writeKeysText(options.keysFile, text);
    } finally {
      await release();
    }
    ok(change);
    options.onApplied?.(change);
  };

  // One comparison at a time; one asked for meanwhile runs after it (it may have read too early).
  let running: Promise<void> | null = null;
  let again = false;
  const sync = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (options.role === "publish" ? publish() : follow()).catch(failed).finally(() => {
      running = null;
      if (again) {
        again = false;
        void sync();
      }
    });
    return running;
  };

  client.on("ready", () => void sync());
  const timer = setInterval(() => void sync(), options.interval ?? DEFAULT_SYNC_INTERVAL);
  timer.unref();
  // A publisher also looks as soon as the file is replaced; a follower hears of a change on the channel.
  let watcher: FSWatcher | null = null;
  let subscriber: Redis | null = null;
  if (options.role === "publish") {
    try {
      const name = basename(options.keysFile);
      watcher = watch(dirname(options.keysFile), { persistent: false }, (_e, changed) => {
        if (changed === null || changed === name) void sync();
      });
      watcher.on("error", () => watcher?.close());
    } catch {
      watcher = null; // the interval alone
    }
  } else {
    subscriber = new Redis(options.redisUrl, { ...redisOptions, autoResubscribe: false, commandTimeout: undefined });
    subscriber.on("error", () => {});
    subscriber.on(
      "ready",
      () =>
        void subscriber?.subscribe(KEYS_CHANNEL).then(
          () => sync(),
          () => {},
        ),
    );
    subscriber.on("message", () => void sync());
  }

  return {
    status: () => ({ ...state }),
    sync,
    close: async () => {
      closed = true;
      clearInterval(timer);
      watcher?.close();
      await running;
      client.disconnect();
      subscriber?.disconnect();
    },
  };
}
