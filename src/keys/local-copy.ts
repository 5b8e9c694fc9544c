// A machine's copy of the keys in Redis (KEYS_SYNC=follow or shared): the keys file, and beside it the change number
// of the version it holds (changeFileOf), so that the newest copy can be told when Redis has lost the keys.
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { writeKeysText } from "./keys-file.ts";
import { acquireKeysLock } from "./keys-lock.ts";
import { changeFileOf } from "./keys-store.ts";
import { digestOf } from "./redis-keys.ts";

const ChangeFileSchema = z.object({ change: z.number().int().nonnegative(), digest: z.string() });

/** The keys file's text and the change number of that text (0: not known), or null when there is no keys file. */
export interface LocalCopy {
  text: string;
  digest: string;
  change: number;
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
  return { text, digest, change: recorded?.digest === digest ? recorded.change : 0 };
}

/**
 * Records version `change` (sha256 `digest`) in the copy, under the writers' lock: its `text` to the keys file (left
 * out: the file holds it already), then the change number beside it, each written atomically.
 */
export async function writeLocalCopy(keysFile: string, version: { change: number; digest: string; text?: string }) {
  const release = await acquireKeysLock(keysFile);
  try {
    if (version.text !== undefined) await writeKeysText(keysFile, version.text);
    const recorded = { change: version.change, digest: version.digest };
    await writeKeysText(changeFileOf(keysFile), JSON.stringify(recorded) + "\n");
  } finally {
    await release();
  }
}
