// What a build takes from the published snapshot (manifest, product lines, blobs, search index), each part read softly.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { BlobEntry, BlobRecord, Manifest } from "../snapshot/format.ts";
import {
  blobRecord,
  LINES_FILE,
  LinesFileSchema,
  packPath,
  ROUTES_FILE,
  RoutesSchema,
  SEARCH_INDEX_FILE,
  snapshotDir,
  sha256Hex,
} from "../snapshot/format.ts";
import { currentSnapshotId, loadManifest, SnapshotError } from "../snapshot/load.ts";
import { safeJoin } from "./paths.ts";

/** Where a body already is: its pack's name and size, and its record there. */
export interface KnownBlob {
  pack: string;
  packSize: number;
  record: BlobRecord;
}
export type KnownBlobs = ReadonlyMap<string, KnownBlob>;

/** The previous build's product lines: line digest -> blob hash ("" when not on sale), and what decided them. */
interface PreviousLines {
  rules: number;
  render: string | null;
  products: Map<string, string>;
}

/** The previous search index: its file, its bytes (checked against the manifest) and its documents' digest. */
export interface PreviousIndex {
  path: string;
  bytes: Buffer;
  docsDigest: string;
}

/** The published snapshot, as far as a build can use it. */
export type Previous =
  /** The caller's `unchanged` said yes: nothing past the manifest was read. */
  | { unchanged: true; id: string; manifest: Manifest }
  | {
      unchanged: false;
      id: string;
      manifest: Manifest;
      /** null when missing, unreadable, not what the manifest records, or of another format. */
      lines: PreviousLines | null;
      /** Every blob of its routes whose pack they name, by hash (empty when the routes cannot be read). */
      blobs: KnownBlobs;
      /** null when the index file is missing or is not what the manifest records. */
      searchIndex: PreviousIndex | null;
    };

/**
 * The parts of routes.json a build reuses (it makes the resources anew). The file matches the digest its manifest
 * of this format records, so its blob entries are taken as they are: parsing 105,000 of them with a zod schema
 * took 1.1-2.3 s on a busy 2-core machine, as long as the JSON.parse of the file.
 */
const ReusedRoutesSchema = z.object({
  format: RoutesSchema.shape.format,
  packs: RoutesSchema.shape.packs,
  blobs: z.custom<BlobEntry[]>(Array.isArray),
});

/**
 * Reads the published snapshot for a build. null when nothing is published or its manifest cannot be read or is of
 * another format (the build then makes everything anew). `unchanged` is asked first, with the manifest: when it
 * says yes, nothing more is read (the build has nothing to do). Every other part that is unreadable, does not
 * match the manifest's digest or is of another format is left out: the build renders and writes it anew.
 */
export async function readPrevious(
  dataDir: string,
  unchanged: (manifest: Manifest) => boolean = () => false,
): Promise<Previous | null> {
  const id = await currentSnapshotId(dataDir);
  if (id === null) return null;
  let manifest: Manifest;
  try {
    manifest = await loadManifest(dataDir, id);
  } catch (err) {
    if (err instanceof SnapshotError) return null;
    throw err;
  }
  if (unchanged(manifest)) return { unchanged: true, id, manifest };
  const dir = snapshotDir(dataDir, id);
  const [lines, blobs, searchIndex] = await Promise.all([
    readLines(dir, manifest),
    readBlobs(dir, manifest),
    readIndex(dir, manifest),
  ]);
  return { unchanged: false, id, manifest, lines, blobs, searchIndex };
}

async function readLines(dir: string, manifest: Manifest): Promise<PreviousLines | null> {
  const parsed = LinesFileSchema.safeParse(
    parseJson(await readRecorded(join(dir, LINES_FILE), manifest.files[LINES_FILE])),
  );
  if (!parsed.success) return null;
  const { rules, render, products } = parsed.data;
  return { rules, render, products: new Map(Object.entries(products)) };
}

async function readBlobs(dir: string, manifest: Manifest): Promise<Map<string, KnownBlob>> {
  const blobs = new Map<string, KnownBlob>();
  const parsed = ReusedRoutesSchema.safeParse(
    parseJson(await readRecorded(join(dir, ROUTES_FILE), manifest.files[ROUTES_FILE])),
  );
  if (!parsed.success) return blobs;
  const { packs } = parsed.data;
  for (const entry of parsed.data.blobs) {
    const record = blobRecord(entry);
    const [pack, packSize] = packs[record.pack] ?? [];
    if (pack !== undefined && packSize !== undefined) blobs.set(record.hash, { pack, packSize, record });
  }
  return blobs;
}

async function readIndex(dir: string, manifest: Manifest): Promise<PreviousIndex | null> {
  const path = join(dir, SEARCH_INDEX_FILE);
  const bytes = await readRecorded(path, manifest.files[SEARCH_INDEX_FILE]);
  return bytes && { path, bytes, docsDigest: manifest.search_docs_digest };
}

/** Whether a pack's bytes have its size and hash to its name. */
export async function packIsIntact(dataDir: string, name: string, size: number): Promise<boolean> {
  const hash = createHash("sha256");
  let length = 0;
  try {
    for await (const chunk of createReadStream(safeJoin(dataDir, packPath(name)))) {
      hash.update(chunk as Buffer);
      length += (chunk as Buffer).length;
    }
  } catch {
    return false;
  }
  return length === size && hash.digest("hex").slice(0, 32) === name;
}

/** Reads known blobs' bytes (identity, gzip, brotli, one after another) from their packs, each pack opened once; close() when done. */
export function createPackReader(dataDir: string) {
  const handles = new Map<string, Promise<FileHandle>>();
  return {
    async read({ pack, record }: KnownBlob): Promise<Buffer> {
      let handle = handles.get(pack);
      if (!handle) handles.set(pack, (handle = open(safeJoin(dataDir, packPath(pack)), "r")));
      const length = record.size + record.gzipSize + record.brSize;
      const bytes = Buffer.allocUnsafe(length);
      const { bytesRead } = await (await handle).read(bytes, 0, length, record.offset);
      if (bytesRead !== length) throw new Error(`${packPath(pack)}: blob ${record.hash} lies outside the pack`);
      return bytes;
    },
    async close() {
      await Promise.all(
        [...handles.values()].map((h) =>
          h.then(
            (fh) => fh.close(),
            () => {},
          ),
        ),
      );
    },
  };
}

/** A file's bytes if it can be read and its sha256 is `digest`, else null. */
async function readRecorded(path: string, digest: string): Promise<Buffer | null> {
  const bytes = await readFile(path).catch(() => null);
  return bytes && sha256Hex(bytes) === digest ? bytes : null;
}

/** JSON's value, or undefined for no bytes or bytes that are not JSON (which no schema accepts). */
function parseJson(bytes: Buffer | null): unknown {
  if (!bytes) return undefined;
  try {
    return JSON.parse(bytes.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}
