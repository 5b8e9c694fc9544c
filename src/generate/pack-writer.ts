// Writes the bodies a snapshot needs that no kept pack holds into new packs (1 GiB at most each): compressed (or copied), appended, renamed atomically.
import type { Hash } from "node:crypto";
import { createHash } from "node:crypto";
import type { WriteStream } from "node:fs";
import { createWriteStream } from "node:fs";
import { mkdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import pLimit from "p-limit";
import type { BlobRecord } from "../snapshot/format.ts";
import { PACKS_DIR, packPath } from "../snapshot/format.ts";
import type { Compressed } from "./compress-pool.ts";
import { createCompressPool } from "./compress-pool.ts";
import { safeJoin } from "./paths.ts";
import { blobHash } from "./plan.ts";
import type { KnownBlob, KnownBlobs } from "./previous.ts";
import { createPackReader, packIsIntact } from "./previous.ts";

/** Bodies a worker compresses (or blobs copied from an old pack) per batch. */
const BATCH_SIZE = 256;
/** Batches being compressed or waiting to be appended at once: bounds the memory the compressed bytes hold. */
const DEFAULT_BATCHES_IN_FLIGHT = 8;
/**
 * Largest pack written: a blob that would take the pack past it starts a new one. A server and the build's
 * verification read each pack whole, and fs.readFile reads at most 2 GiB (a Buffer holds at most 4 GiB): the one
 * pack of a full build at 1,000,000 sample products would be 4.4 GB.
 */
export const MAX_PACK_BYTES = 1 << 30;

export interface WritePackOptions {
  /**
   * Write every blob into the new pack, so that the snapshot uses that pack alone: a blob of `known` is copied from
   * its old pack as it is there (identity, gzip and brotli bytes, and its gzip pieces), not compressed again, once
   * that pack's bytes are checked against its name. Default false: blobs of `known` stay where they are.
   */
  repack?: boolean;
  /** Batches in flight. Default DEFAULT_BATCHES_IN_FLIGHT (8). */
  concurrency?: number;
  /** Bytes past which a new pack is started (a blob is never split). Default MAX_PACK_BYTES (1 GiB). */
  maxPackBytes?: number;
  /** Called after each blob written, with the count so far. */
  onProgress?: (done: number) => void;
}

export interface WritePackResult {
  /** The packs the blobs now point into (`Routes.packs`). */
  packs: [string, number][];
  /** The blobs given, in the same order, each placed in a pack: its pack, offset and compressed sizes filled in. */
  blobs: BlobRecord[];
  /** Blobs written to the new pack, copied ones included. */
  written: number;
  /** Of those, blobs copied from an old pack (a repack) rather than compressed. */
  copied: number;
  /** Files written (the new packs, or none). */
  files: number;
  bytes: number;
}

/**
 * What to append for one blob: its body to compress (null: asked of `body` when its batch is compressed, so that
 * the bodies of a large snapshot are not all in memory at once), or its bytes in an old pack to copy.
 */
type Source = { body: Buffer | null } | { from: KnownBlob };

/**
 * Places every blob: blobs in `known` stay where they are (unless `repack`); the others are compressed, or copied
 * from their old pack, and appended to new packs (one unless they exceed `maxPackBytes`), each written under a
 * temporary name and renamed to its digest.
 * `body` gives a blob's identity bytes, by index (asked only of blobs to compress, a batch at a time; bytes that
 * do not hash to the blob's hash are an error). The records given are not
 * changed.
 */
export async function writePack(
  dataDir: string,
  blobs: readonly BlobRecord[],
  body: (index: number) => Buffer,
  known: KnownBlobs,
  options: WritePackOptions = {},
): Promise<WritePackResult> {
  const packIndex = new Map<string, number>();
  const packs: [string, number][] = [];
  const indexOf = (name: string, size: number) => {
    let i = packIndex.get(name);
    if (i === undefined) {
      packIndex.set(name, (i = packs.length));
      packs.push([name, size]);
    }
    return i;
  };
  const { placed, toWrite, sources } = sortBlobs(blobs, known, options.repack ?? false, indexOf);
  if (toWrite.length === 0) return { packs, blobs: placed, written: 0, copied: 0, files: 0, bytes: 0 };
  await checkSourcePacks(dataDir, blobs, body, sources);

  await mkdir(join(dataDir, PACKS_DIR), { recursive: true });
  const sink = createPackSink(dataDir, options.maxPackBytes ?? MAX_PACK_BYTES);
  /** The new pack (by order written) each blob of toWrite went into. */
  const packOf = new Map<number, number>();
  let done = 0;
  let copied = 0;
  // Batches are compressed on worker threads (or read from old packs), a bounded number at once, and appended in order.
  const preparer = createBatchPreparer(dataDir, blobs, body, sources);
  const limit = pLimit(options.concurrency ?? DEFAULT_BATCHES_IN_FLIGHT);
  let writing: Promise<void> = Promise.resolve();
  /** Appends a prepared batch's blobs to the sink, in order, and places each. */
  const append = async (batch: number[], { read, byIndex }: PreparedBatch) => {
    for (let k = 0; k < batch.length; k++) {
      const i = batch[k]!;
      const copy = read[k];
      if (copy) {
        const at = await sink.append([copy]);
        placed[i] = { ...(sources.get(i) as { from: KnownBlob }).from.record, offset: at.offset };
        packOf.set(i, at.pack);
        copied++;
      } else {
        const { body, gzip, gzipPieces, br } = byIndex.get(i)!;
        const at = await sink.append([body, ...(gzip ? [gzip] : []), ...(br ? [br] : [])]);
        placed[i] = {
          ...blobs[i]!,
          offset: at.offset,
          gzipSize: gzip?.length ?? 0,
          brSize: br?.length ?? 0,
          gzipPieces,
        };
        packOf.set(i, at.pack);
      }
      options.onProgress?.(++done);
    }
  };
  try {
    const batches: number[][] = [];
    for (let i = 0; i < toWrite.length; i += BATCH_SIZE) batches.push(toWrite.slice(i, i + BATCH_SIZE));
    await Promise.all(
      batches.map((batch) =>
        limit(async () => {
          const prepared = await preparer.prepare(batch);
          writing = writing.then(() => append(batch, prepared));
          await writing;
        }),
      ),
    );
    const written = await sink.finish();
    const indices = written.map(([name, size]) => indexOf(name, size));
    for (const i of toWrite) placed[i] = { ...placed[i]!, pack: indices[packOf.get(i)!]! };
    return {
      packs,
      blobs: placed,
      written: toWrite.length,
      copied,
      files: written.length,
      bytes: written.reduce((n, [, size]) => n + size, 0),
    };
  } catch (err) {
    await sink.abort();
    throw err;
  } finally {
    await preparer.close();
  }
}

/**
 * Which blobs stay where they are (placed in their old pack, by `indexOf`) and which are written, each from its
 * body or (`repack`) from its old pack.
 */
function sortBlobs(
  blobs: readonly BlobRecord[],
  known: KnownBlobs,
  repack: boolean,
  indexOf: (pack: string, size: number) => number,
) {
  const placed = [...blobs];
  const toWrite: number[] = [];
  const sources = new Map<number, Source>();
  for (let i = 0; i < blobs.length; i++) {
    const old = known.get(blobs[i]!.hash);
    // Its gzip pieces are split at its links: an old blob whose links were found elsewhere is compressed anew.
    const reusable = old && sameNumbers(old.record.links, blobs[i]!.links) ? old : undefined;
    if (reusable && !repack) placed[i] = { ...reusable.record, pack: indexOf(reusable.pack, reusable.packSize) };
    else {
      toWrite.push(i);
      sources.set(i, reusable ? { from: reusable } : { body: null });
    }
  }
  return { placed, toWrite, sources };
}

/** A batch made ready to append: each blob's bytes read from its old pack (by position), or compressed (by index). */
interface PreparedBatch {
  read: (Buffer | null)[];
  byIndex: Map<number, Compressed & { body: Buffer }>;
}

/** Makes batches ready to append: bodies compressed on worker threads, copies read from their old packs. */
function createBatchPreparer(
  dataDir: string,
  blobs: readonly BlobRecord[],
  body: (index: number) => Buffer,
  sources: Map<number, Source>,
) {
  const pool = createCompressPool();
  const oldPacks = createPackReader(dataDir);
  return {
    async prepare(batch: number[]): Promise<PreparedBatch> {
      const fresh: { i: number; body: Buffer }[] = [];
      for (const i of batch) {
        const source = sources.get(i)!;
        if ("body" in source) fresh.push({ i, body: source.body ?? bodyOf(blobs[i]!, body(i)) });
      }
      const [compressed, read] = await Promise.all([
        fresh.length
          ? pool.compress(fresh.map(({ i, body }) => ({ bytes: body, links: blobs[i]!.links })))
          : Promise.resolve([]),
        Promise.all(
          batch.map(async (i) => {
            const s = sources.get(i)!;
            return "from" in s ? oldPacks.read(s.from) : null;
          }),
        ),
      ]);
      const byIndex = new Map<number, Compressed & { body: Buffer }>(
        fresh.map(({ i, body }, k) => [i, { ...compressed[k]!, body }]),
      );
      return { read, byIndex };
    },
    close: async () => {
      await Promise.all([pool.close(), oldPacks.close()]);
    },
  };
}

/**
 * Appends blobs to new packs, each written under a temporary name and renamed to its digest once complete; a blob
 * that would take the pack past `maxBytes` starts the next one (a blob alone is never refused).
 */
function createPackSink(dataDir: string, maxBytes: number) {
  interface Open {
    tmp: string;
    out: WriteStream;
    failed: Promise<never>;
    digest: Hash;
    size: number;
  }
  const finished: [string, number][] = [];
  let current: Open | null = null;
  const open = (): Open => {
    const tmp = safeJoin(dataDir, join(PACKS_DIR, `.tmp-${process.pid}-${finished.length}.pack`));
    const out = createWriteStream(tmp);
    const failed = new Promise<never>((_, reject) => out.once("error", reject));
    failed.catch(() => {});
    return { tmp, out, failed, digest: createHash("sha256"), size: 0 };
  };
  const close = async (pack: Open) => {
    await Promise.race([new Promise<void>((r) => pack.out.end(() => r())), pack.failed]);
    const name = pack.digest.digest("hex").slice(0, 32);
    await rename(pack.tmp, safeJoin(dataDir, packPath(name)));
    finished.push([name, pack.size]);
  };
  return {
    /** Appends one blob's chunks, one after another; returns the pack (by order written) and offset it starts at. */
    async append(chunks: Buffer[]): Promise<{ pack: number; offset: number }> {
      const length = chunks.reduce((n, c) => n + c.length, 0);
      if (current && current.size > 0 && current.size + length > maxBytes) {
        const full = current;
        current = null;
        await close(full);
      }
      const pack = (current ??= open());
      const at = { pack: finished.length, offset: pack.size };
      for (const chunk of chunks) {
        pack.digest.update(chunk);
        pack.size += chunk.length;
        if (!pack.out.write(chunk))
          await Promise.race([new Promise<void>((r) => pack.out.once("drain", () => r())), pack.failed]);
      }
      return at;
    },
    /** Completes the last pack; returns every pack written, in order, as [name, size]. */
    async finish(): Promise<[string, number][]> {
      if (current) {
        const last = current;
        current = null;
        await close(last);
      }
      return finished;
    },
    /** Removes the pack being written (packs already complete are left for pruning, as any unused pack). */
    async abort(): Promise<void> {
      if (!current) return;
      current.out.destroy();
      await unlink(current.tmp).catch(() => {});
      current = null;
    },
  };
}

/** A blob's identity bytes, which must be there to be compressed, and be the bytes its hash was taken of. */
function bodyOf(blob: BlobRecord, body: Buffer): Buffer {
  if (body.length !== blob.size)
    throw new Error(`blob ${blob.hash}: ${body.length} bytes to write, expected ${blob.size}`);
  if (blobHash(body) !== blob.hash) throw new Error(`blob ${blob.hash}: the bytes to write hash to another value`);
  return body;
}

/**
 * A new pack is named after its bytes, so what it copies from an old pack must be what that pack's name vouches
 * for: each pack copied from is read and hashed first. A blob in a pack that does not match is compressed from its
 * body instead (one reused unrendered is rendered now, and must render to its hash).
 */
async function checkSourcePacks(
  dataDir: string,
  blobs: readonly BlobRecord[],
  body: (index: number) => Buffer,
  sources: Map<number, Source>,
): Promise<void> {
  const packs = new Map<string, number>();
  for (const s of sources.values()) if ("from" in s) packs.set(s.from.pack, s.from.packSize);
  const damaged = new Set<string>();
  for (const [name, size] of packs) if (!(await packIsIntact(dataDir, name, size))) damaged.add(name);
  if (damaged.size === 0) return;
  for (const [i, s] of sources) {
    if (!("from" in s) || !damaged.has(s.from.pack)) continue;
    const bytes = body(i);
    if (blobHash(bytes) !== blobs[i]!.hash)
      throw new Error(
        `blob ${blobs[i]!.hash}: its old pack ${s.from.pack} is damaged, and rendering it again gives other bytes`,
      );
    sources.set(i, { body: bytes });
  }
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
