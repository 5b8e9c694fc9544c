// Writes the bodies a snapshot needs that no kept pack holds into one new pack: compressed, appended, renamed atomically.
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import pLimit from "p-limit";
import type { BlobEntry } from "../snapshot/format.ts";
import { PACKS_DIR, packPath } from "../snapshot/format.ts";
import { safeJoin } from "./paths.ts";

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/** Bodies compressed at once (zlib runs them on libuv's thread pool). */
export const DEFAULT_COMPRESS_CONCURRENCY = 64;
/** Bodies smaller than this are not worth compressing. */
export const MIN_COMPRESS_SIZE = 256;

/** Brotli's quality 11 costs ~7 ms for a 3 KB product, so the highest qualities are kept for the few large bodies. */
export function brotliQuality(size: number): number {
  if (size < 16 * 1024) return 5;
  if (size < 256 * 1024) return 9;
  return 11;
}

/** Where a body already is: its pack's name and its entry there. */
export type KnownBlobs = ReadonlyMap<string, { pack: string; packSize: number; entry: BlobEntry }>;

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
  // Compression runs ahead in parallel (bounded); appends happen in completion order, one at a time.
  const limit = pLimit(options.concurrency ?? DEFAULT_COMPRESS_CONCURRENCY);
  let writing: Promise<void> = Promise.resolve();
  try {
    await Promise.all(
      fresh.map((i) =>
        limit(async () => {
          const entry = entries[i]!;
          const body = bodies[i]!;
          const [gz, br] = body.length >= MIN_COMPRESS_SIZE ? await compress(body) : [null, null];
          // A variant is stored only where it saves at least a tenth.
          const useGz = gz && gz.length < body.length * 0.9 ? gz : null;
          const useBr = br && br.length < body.length * 0.9 ? br : null;
          writing = writing.then(async () => {
            entry[5] = -1; // set below, once the pack's name is known
            entry[6] = offset;
            entry[2] = useGz?.length ?? 0;
            entry[3] = useBr?.length ?? 0;
            await append(body);
            if (useGz) await append(useGz);
            if (useBr) await append(useBr);
            options.onProgress?.(++done);
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
  }
}

async function compress(body: Buffer): Promise<[Buffer, Buffer]> {
  return Promise.all([
    gzip(body, { level: 9 }),
    brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: brotliQuality(body.length), [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  ]);
}
