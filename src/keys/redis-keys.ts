// The keys as Redis holds them (KEYS_SYNC): one hash with the whole keys file's text, its sha256 and a change number,
// each new version announced on a channel; the scripts that change it atomically, and the connection that runs them.
import { createHash } from "node:crypto";
import { Redis } from "ioredis";

/**
 * The Redis hash holding the keys: `change` (a counter), `digest` (sha256 of `text`), `text`, `history` (KEYS_SYNC=
 * shared: the version's history as JSON, src/keys/history.ts; a publisher's versions have none), and `seeded` ("1"
 * while the text is a copy given by a machine after Redis was found empty, and no change has been made on it).
 */
export const KEYS_DOC = "flash-sale-api:keys";
/** Where each new change is announced, as "<change> <digest>". */
export const KEYS_CHANNEL = "flash-sale-api:keys:changed";
/** A change's Redis command not answered within this time counts as Redis being unreachable, ms (`answered`). */
export const COMMAND_DEADLINE_MS = 1_000;
/**
 * ioredis's own limit on every command, ms: a backstop for a Redis that accepts and never answers (a following
 * comparison waits this long at most). Not the deadline a change is held to: ioredis's timer fires before a reply
 * already received is read when the process was busy past it, and would blame Redis for the process's own stall.
 */
const COMMAND_TIMEOUT_MS = 10_000;

/** A command that did not answer within its deadline (`answered`). */
class NoAnswerError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "NoAnswerError";
  }
}

/**
 * `command`, or a NoAnswerError if it has not answered `ms` after now. When the deadline passes, the event loop reads
 * what has arrived (its I/O phase runs before setImmediate's) before the command is given up: a process stalled past
 * the deadline (many requests at once on a loaded machine) does not refuse a change whose reply waits to be read.
 */
export const answered = <R>(command: Promise<R>, ms = COMMAND_DEADLINE_MS): Promise<R> =>
  new Promise<R>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new NoAnswerError(ms));
        }),
      ms,
    );
    const settle = (finish: () => void) => {
      if (settled) return; // a late reply, after the change was given up
      settled = true;
      clearTimeout(timer);
      finish();
    };
    command.then(
      (value) => settle(() => resolve(value)),
      (err: unknown) => settle(() => reject(err instanceof Error ? err : new Error(String(err)))),
    );
  });

/**
 * Publishes ARGV[2] (a keys file's text, digest ARGV[1]) unless it is what Redis holds: a new change number, and an
 * announcement. So many publishers of one file (workers, the portal) make one change, and a Redis that lost its data
 * (restarted empty) is given the file again by the next comparison.
 */
const PUBLISH_SCRIPT = `
if redis.call('HGET', KEYS[1], 'digest') == ARGV[1] then return tonumber(redis.call('HGET', KEYS[1], 'change')) end
local change = redis.call('HINCRBY', KEYS[1], 'change', 1)
redis.call('HSET', KEYS[1], 'digest', ARGV[1], 'text', ARGV[2])
redis.call('HDEL', KEYS[1], 'history')
redis.call('PUBLISH', KEYS[2], change .. ' ' .. ARGV[1])
return change
`;

/**
 * Gives Redis a machine's copy (change ARGV[3], digest ARGV[4], text ARGV[5], history ARGV[6]) if Redis still holds
 * what the machine saw when it decided to (change ARGV[1] with digest ARGV[2]; both empty: nothing), so that a
 * version made meanwhile is never overwritten (which copies may be given: copyToSeed, src/keys/shared-keys.ts).
 * 1 if given, 0 if not.
 */
const SEED_SCRIPT = `
if (redis.call('HGET', KEYS[1], 'change') or '') ~= ARGV[1] or (redis.call('HGET', KEYS[1], 'digest') or '') ~= ARGV[2] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'change', ARGV[3], 'digest', ARGV[4], 'text', ARGV[5], 'history', ARGV[6], 'seeded', '1')
redis.call('PUBLISH', KEYS[2], ARGV[3] .. ' ' .. ARGV[4])
return 1
`;

/**
 * Compare-and-set: makes ARGV[3] (digest ARGV[2], history ARGV[4]) the keys if Redis still holds change ARGV[1],
 * which the writer read and changed; returns the new change number, or -1 if another writer made a change first
 * (read again).
 */
const UPDATE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'change') ~= ARGV[1] then return -1 end
local change = redis.call('HINCRBY', KEYS[1], 'change', 1)
redis.call('HSET', KEYS[1], 'digest', ARGV[2], 'text', ARGV[3], 'history', ARGV[4])
redis.call('HDEL', KEYS[1], 'seeded')
redis.call('PUBLISH', KEYS[2], change .. ' ' .. ARGV[2])
return change
`;

/** A connection with the keys' scripts as commands (each takes KEYS_DOC and KEYS_CHANNEL first). */
export type KeysRedis = Redis & {
  publishKeys(doc: string, channel: string, digest: string, text: string): Promise<number>;
  seedKeys(
    doc: string,
    channel: string,
    heldChange: string,
    heldDigest: string,
    change: number,
    digest: string,
    text: string,
    history: string,
  ): Promise<number>;
  updateKeys(
    doc: string,
    channel: string,
    held: string,
    digest: string,
    text: string,
    history: string,
  ): Promise<number>;
};

export const digestOf = (text: string) => createHash("sha256").update(text).digest("hex");

/** The options of every keys connection: a command fails at once while Redis is away, and within 1 s if it hangs. */
export const keysRedisOptions = (name: string) => ({
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: COMMAND_TIMEOUT_MS,
  connectTimeout: 2_000,
  retryStrategy: (times: number) => Math.min(100 * times, 1_000),
  connectionName: `flash-sale-api-keys-${name}`,
});

/** Connects to `redisUrl` (reconnecting by itself) with the keys' scripts defined; errors are left to the commands. */
export function connectKeysRedis(redisUrl: string, name: string): KeysRedis {
  const client = new Redis(redisUrl, keysRedisOptions(name)) as KeysRedis;
  client.defineCommand("publishKeys", { numberOfKeys: 2, lua: PUBLISH_SCRIPT });
  client.defineCommand("seedKeys", { numberOfKeys: 2, lua: SEED_SCRIPT });
  client.defineCommand("updateKeys", { numberOfKeys: 2, lua: UPDATE_SCRIPT });
  client.on("error", () => {}); // every failure is seen by the command that meets it
  return client;
}
