// Writes the bodies a snapshot needs that no kept pack holds into one new pack: compressed, appended, renamed atomically.
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import pLimit from "p-limit";
import type { BlobEntry } from "../snapshot/format.ts";
import { PACKS_DIR, packPath } from "../snapshot/format.ts";
import { createCompressPool } from "./compress-pool.ts";
import { safeJoin } from "./paths.ts";

/** Bodies a worker compresses per message. */
const BATCH_SIZE = 256;
/** Batches being compressed or waiting to be appended at once: bounds the memory the compressed bytes hold. */
export const DEFAULT_BATCHES_IN_FLIGHT = 8;

/** Where a body already is: its pack's name and size, and its entry there. */
export interface KnownBlob {
  pack: string;
  packSize: number;
  entry: BlobEntry;
}
export type KnownBlobs = ReadonlyMap<string, KnownBlob>;

export interface WritePackResult {
  /** The packs the entries now point into (`Routes.packs`). */
  packs: [string, number][];
  /** Blobs written to the new pack. */
  blobs: number;
  /** Files written (the new pack, or none). */
  files: number;
  bytes: number;
}

/**
 * Points every entry at its bytes: blobs in `known` stay where they are; the others are compressed and appended to
 * one new pack, written under a temporary name and renamed to its digest. Fills in sizes, pack and offset in place.
 */
export async function writePack(
  dataDir: string,
  entries: BlobEntry[],
  bodies: readonly Buffer[],
  known: KnownBlobs,
  options: { concurrency?: number; onProgress?: (done: number) => void } = {},
): Promise<WritePackResult> {
  const packIndex = new Map<string, number>();
  const packs: [string, number][] = [];
  const fresh: number[] = [];
  const indexOf = (name: string, size: number) => {
    let i = packIndex.get(name);
    if (i === undefined) {
      packIndex.set(name, (i = packs.length));
      packs.push([name, size]);
    }
    return i;
  };
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const old = known.get(entry[0]);
    if (old) {
      entry[2] = old.entry[2];
      entry[3] = old.entry[3];
      entry[5] = indexOf(old.pack, old.packSize);
      entry[6] = old.entry[6];
      entry[7] = old.entry[7];
    } else fresh.push(i);
  }
  if (fresh.length === 0) return { packs, blobs: 0, files: 0, bytes: 0 };

  await mkdir(join(dataDir, PACKS_DIR), { recursive: true });
  const tmp = safeJoin(dataDir, join(PACKS_DIR, `.tmp-${process.pid}.pack`));
  const out = createWriteStream(tmp);
  const failed = new Promise<never>((_, reject) => out.once("error", reject));
  failed.catch(() => {});
  const digest = createHash("sha256");
  let offset = 0;
  let done = 0;
  const append = async (chunk: Buffer) => {
    digest.update(chunk);
    offset += chunk.length;
    if (!out.write(chunk)) await Promise.race([new Promise<void>((r) => out.once("drain", () => r())), failed]);
  };
  // Batches are compressed on worker threads, a bounded number at once, and appended in order.
  const pool = createCompressPool();
  const limit = pLimit(options.concurrency ?? DEFAULT_BATCHES_IN_FLIGHT);
  let writing: Promise<void> = Promise.resolve();
  try {
    const batches: number[][] = [];
    for (let i = 0; i < fresh.length; i += BATCH_SIZE) batches.push(fresh.slice(i, i + BATCH_SIZE));
    await Promise.all(
      batches.map((batch) =>
        limit(async () => {
          const compressed = await pool.compress(batch.map((i) => ({ bytes: bodies[i]!, links: entries[i]![4] })));
          writing = writing.then(async () => {
            for (let k = 0; k < batch.length; k++) {
              const entry = entries[batch[k]!]!;
              const { gzip, gzipPieces, br } = compressed[k]!;
              entry[6] = offset;
              entry[2] = gzip?.length ?? 0;
              entry[3] = br?.length ?? 0;
              entry[7] = gzipPieces;
              await append(bodies[batch[k]!]!);
              if (gzip) await append(gzip);
              if (br) await append(br);
              options.onProgress?.(++done);
            }
          });
          await writing;
        }),
      ),
    );
    await Promise.race([new Promise<void>((r) => out.end(() => r())), failed]);
    const name = digest.digest("hex").slice(0, 32);
    await rename(tmp, safeJoin(dataDir, packPath(name)));
    const index = indexOf(name, offset);
    for (const i of fresh) entries[i]![5] = index;
    return { packs, blobs: fresh.length, files: 1, bytes: offset };
  } catch (err) {
    out.destroy();
    await unlink(tmp).catch(() => {});
    throw err;
  } finally {
    await pool.close();
  }
}
