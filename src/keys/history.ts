// Which version of the keys in Redis descends from which (KEYS_SYNC=shared). Redis orders the versions it makes (a
// compare-and-set on the change number), but a Redis that lost its data (emptied, or restarted from an older
// snapshot) is given a machine's copy again or built on as it is, and from there its change numbers repeat ones
// other machines already hold for other keys. So each version carries its history: the digests of the versions just
// before it (one per change number), and its epochs (a random ID each time a copy is given to Redis, with the change
// it began at) for what is older. A machine takes a version only if its own is in that history.
import { randomBytes } from "node:crypto";
import { z } from "zod";

/** Epochs a history keeps (the newest): a copy older than all of them cannot be shown to be in it. */
const MAX_EPOCHS = 32;
/** Versions whose digests a history keeps: a copy this many changes behind or fewer is checked digest by digest. */
const MAX_RECENT = 64;
/** The first 16 hex digits of a version's sha256: enough to tell versions apart, short enough to keep 64. */
const short = (digest: string) => digest.slice(0, 16);

const HEX16 = z.string().regex(/^[0-9a-f]{16}$/);
export const HistorySchema = z.strictObject({
  /** Oldest first: each epoch, and the change number of its first version (the copy given to Redis). */
  epochs: z
    .array(z.strictObject({ epoch: HEX16, base: z.number().int().nonnegative() }))
    .min(1)
    .max(MAX_EPOCHS),
  /** The short digests of the versions up to this one, oldest first, one per change number (this one's last). */
  recent: z.array(HEX16).min(1).max(MAX_RECENT),
});
export type History = z.infer<typeof HistorySchema>;

/** A version of the keys. No history: written by code before histories, or by a publisher (KEYS_SYNC=publish). */
export interface Version {
  change: number;
  /** sha256 of its text, hex. */
  digest: string;
  history?: History | undefined;
}

/** The history in Redis's `history` field, or undefined (absent, or not one: a version whose history is unknown). */
export function parseHistory(text: string | null | undefined): History | undefined {
  if (!text) return undefined;
  try {
    return HistorySchema.parse(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** The history of `copy` given to Redis (an empty Redis, or one behind it): its own, and a new epoch from here. */
export function givenHistory(copy: Version): History {
  const epoch = { epoch: randomBytes(8).toString("hex"), base: copy.change };
  const own = copy.history ?? { epochs: [], recent: [short(copy.digest)] };
  return { epochs: [...own.epochs, epoch].slice(-MAX_EPOCHS), recent: own.recent };
}

/** The history of the version made from `held` (change + 1) whose digest is `digest`. */
export function nextHistory(held: Version, digest: string): History {
  const own = held.history ?? {
    epochs: [{ epoch: randomBytes(8).toString("hex"), base: held.change }],
    recent: [short(held.digest)],
  };
  return { epochs: own.epochs, recent: [...own.recent, short(digest)].slice(-MAX_RECENT) };
}

/**
 * Whether `x` is `y` or a version in `y`'s history. Within y's recent versions, by x's digest at x's change number;
 * before them, by x's epoch: y went on in it at least to x's change (a copy given to Redis and not changed since is
 * the copy it was given from, whose epoch is looked for too). Versions without a history are in none.
 */
export function isAncestor(x: Version, y: Version): boolean {
  if (!x.history || !y.history || x.change > y.change) return false;
  const first = y.change - y.history.recent.length + 1;
  if (x.change >= first) return y.history.recent[x.change - first] === short(x.digest);
  for (let epochs = x.history.epochs; epochs.length > 0; epochs = epochs.slice(0, -1)) {
    const own = epochs.at(-1)!;
    const at = y.history.epochs.findIndex((e) => e.epoch === own.epoch);
    if (at >= 0) return x.change <= (y.history.epochs[at + 1]?.base ?? y.change);
    if (x.change !== own.base) return false;
  }
  return false;
}

/**
 * Whether a machine whose copy is `own` may take `next` from Redis: `next` descends from it. A copy without a history
 * (never in step with a Redis that gave one: written by older code, or by a publisher's followers) takes any version.
 */
export const descends = (own: Version, next: Version) => !own.history || isAncestor(own, next);
