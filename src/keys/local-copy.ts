// A machine's copy of the keys in Redis (KEYS_SYNC=follow or shared): the keys file, and beside it the change number
// of the version it holds and that version's history (changeFileOf), so that the newest copy can be told when Redis
// has lost the keys, and a version in Redis that does not descend from the copy is refused (src/keys/history.ts).
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { writeKeysText } from "./keys-file.ts";
import { acquireKeysLock } from "./keys-lock.ts";
import { HistorySchema } from "./history.ts";
import type { History, Version } from "./history.ts";
import { changeFileOf } from "./keys-store.ts";
import { digestOf } from "./redis-keys.ts";

const ChangeFileSchema = z.object({
  change: z.number().int().nonnegative(),
  digest: z.string(),
  history: HistorySchema.optional(),
});

/**
 * The keys file's text, the change number of that text (0: not known) and its history (absent: not known), or null
 * when there is no keys file.
 */
export interface LocalCopy extends Version {
  text: string;
}

const readOrNull = (path: string) =>
  readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return null;
    throw err;
  });

/**
 * Reads the copy. Its change number counts only if it was recorded for this very text: a file written after its
 * number (a write cut short between the two) or changed by hand has none (0), which any other copy outranks.
 */
export async function readLocalCopy(keysFile: string): Promise<LocalCopy | null> {
  const text = await readOrNull(keysFile);
  if (text === null) return null;
  const digest = digestOf(text);
  const recorded = await readOrNull(changeFileOf(keysFile))
    .then((json) => ChangeFileSchema.safeParse(JSON.parse(json ?? "null")).data)
    .catch(() => undefined); // unreadable, or not JSON: no number
  if (recorded?.digest !== digest) return { text, digest, change: 0 };
  return { text, digest, change: recorded.change, ...(recorded.history ? { history: recorded.history } : {}) };
}

/**
 * Records version `change` (sha256 `digest`, with its history if it has one) in the copy, under the writers' lock: its
 * `text` to the keys file (left out: the file holds it already), then the change number beside it, each written
 * atomically.
 */
export async function writeLocalCopy(
  keysFile: string,
  version: { change: number; digest: string; text?: string; history?: History | undefined },
) {
  const release = await acquireKeysLock(keysFile);
  try {
    if (version.text !== undefined) await writeKeysText(keysFile, version.text);
    const { change, digest, history } = version;
    const recorded = { change, digest, ...(history ? { history } : {}) };
    await writeKeysText(changeFileOf(keysFile), JSON.stringify(recorded) + "\n");
  } finally {
    await release();
  }
}
