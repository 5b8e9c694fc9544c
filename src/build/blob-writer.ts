// Writes content-addressed blobs (identity, gzip, brotli) into the shared blob store, each atomically.
import { mkdir, rename, writeFile, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import pLimit from "p-limit";
import type { BlobEntry, Encoding } from "../snapshot/format.ts";
import { blobPath } from "../snapshot/format.ts";
import { safeJoin } from "./paths.ts";

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/** Writes in flight at once: enough to keep the disk busy, few enough to bound memory and file handles. */
export const DEFAULT_WRITE_CONCURRENCY = 64;
/** Bodies smaller than this are not worth compressing. */
export const MIN_COMPRESS_SIZE = 256;

/** Brotli's quality 11 costs ~7 ms for a 3 KB product, so the highest qualities are kept for the few large bodies. */
export function brotliQuality(size: number): number {
  if (size < 16 * 1024) return 5;
  if (size < 256 * 1024) return 9;
  return 11;
}

export interface WriteBlobsResult {
  /** Blobs new to the store. */
  blobs: number;
  /** Files written (a blob is up to three: identity, gzip, brotli). */
  files: number;
  bytes: number;
}

/**
 * Writes every blob not already in the store (`existing` names the hashes a previous snapshot holds), filling
 * in the compressed sizes of `entries` in place. Each file is written to a temporary name and renamed, so a
 * killed build leaves no partial file under a blob's name.
 */
export async function writeBlobs(
  dataDir: string,
  entries: BlobEntry[],
  bodies: readonly Buffer[],
  existing: ReadonlyMap<string, BlobEntry>,
  options: { concurrency?: number; onProgress?: (done: number) => void } = {},
): Promise<WriteBlobsResult> {
  const limit = pLimit(options.concurrency ?? DEFAULT_WRITE_CONCURRENCY);
  const madeDirs = new Set<string>();
  let blobs = 0;
  let files = 0;
  let bytes = 0;
  let done = 0;

  const put = async (hash: string, encoding: Encoding, data: Uint8Array) => {
    const target = safeJoin(dataDir, blobPath(hash, encoding));
    const dir = dirname(target);
    if (!madeDirs.has(dir)) {
      await mkdir(dir, { recursive: true });
      madeDirs.add(dir);
    }
    const tmp = `${target}.tmp-${process.pid}`;
    try {
      await writeFile(tmp, data);
      await rename(tmp, target);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
    files++;
    bytes += data.length;
  };

  await Promise.all(
    entries.map((entry, i) =>
      limit(async () => {
        const [hash, size] = entry;
        const previous = existing.get(hash);
        if (previous) {
          entry[2] = previous[2];
          entry[3] = previous[3];
        } else {
          const body = bodies[i]!;
          blobs++;
          await put(hash, "identity", body);
          if (size >= MIN_COMPRESS_SIZE) {
            const [gz, br] = await Promise.all([
              gzip(body, { level: 9 }),
              brotli(body, {
                params: {
                  [zlib.constants.BROTLI_PARAM_QUALITY]: brotliQuality(size),
                  [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size,
                },
              }),
            ]);
            // A variant is stored only where it saves at least a tenth.
            if (gz.length < size * 0.9) {
              await put(hash, "gzip", gz);
              entry[2] = gz.length;
            }
            if (br.length < size * 0.9) {
              await put(hash, "br", br);
              entry[3] = br.length;
            }
          }
        }
        options.onProgress?.(++done);
      }),
    ),
  );
  return { blobs, files, bytes };
}
