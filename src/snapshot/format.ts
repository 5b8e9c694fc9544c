// The snapshot on disk, shared by build (writes it) and serve (reads it): layout, manifest schema, format version.
import { join } from "node:path";
import { z } from "zod";

/** Bumped whenever the manifest or routes change incompatibly; the handler refuses any other version. */
export const SNAPSHOT_FORMAT = 3;

/**
 * Data directory layout:
 *   current                 symlink -> snapshots/<id>, switched by an atomic rename
 *   snapshots/<id>/         manifest.json, routes.json, search.idx
 *   packs/<digest>.pack     resource bodies (identity, gzip, brotli) appended one after another; a build writes
 *                           one pack of the bodies that are new, and snapshots share packs
 * One pack per build instead of a file per body: 100,000 products would otherwise be 300,000 small files, and
 * writing and re-reading them took minutes where one sequential file takes seconds.
 */
export const CURRENT_LINK = "current";
export const SNAPSHOTS_DIR = "snapshots";
export const PACKS_DIR = "packs";
export const MANIFEST_FILE = "manifest.json";
export const ROUTES_FILE = "routes.json";
export const SEARCH_INDEX_FILE = "search.idx";

/** Path of a pack (relative to the data directory). */
export function packPath(name: string): string {
  return join(PACKS_DIR, `${name}.pack`);
}

/** Pack names: the first 32 hex digits of the sha256 of the pack's bytes. */
export const PACK_NAME_RE = /^[0-9a-f]{32}$/;

/** Blob hashes: the first 32 hex digits (128 bits) of the sha256 of the identity bytes. */
export const BLOB_HASH_RE = /^[0-9a-f]{32}$/;

const Hash = z.string().regex(BLOB_HASH_RE);
const Seconds = z.number().int();

const Count = z.number().int().nonnegative();

/**
 * One blob: [hash, size, gzipSize, brotliSize, pageLinkOffsets, pack, offset, gzipPieces]. Its bytes are at
 * `offset` in pack number `pack` (of `Routes.packs`): identity, then gzip, then brotli. A compressed size of 0 means
 * that variant was not worth storing. The link offsets are the byte positions of the closing quote of each page
 * link (`url`, `sale_url`), where `&affid=...` is spliced in. The gzip variant's deflate data is split at those
 * offsets into pieces compressed on their own (src/snapshot/gzip-members.ts); `gzipPieces` are the compressed
 * sizes of every piece but the last (empty without a gzip variant).
 * Format 3 added `gzipPieces`.
 */
export const BlobEntrySchema = z.tuple([Hash, Count, Count, Count, z.array(Count), Count, Count, z.array(Count)]);
export type BlobEntry = z.infer<typeof BlobEntrySchema>;

/**
 * A body: one blob (its index in `blobs`), or a sale list composed of sale blobs: `{"sales":[` + parts joined
 * with `,` + `]}`. Lists are composed by the handler so that the snapshot does not repeat every sale in every
 * state of every list.
 */
export const BodySchema = z.union([z.number().int().nonnegative(), z.strictObject({ sales: z.array(z.number().int().nonnegative()) })]);
export type Body = z.infer<typeof BodySchema>;

/** [from, to, body]: the resource is `body` for from <= t < to (epoch seconds; null = unbounded); 404 outside every segment. */
export const SegmentSchema = z.tuple([Seconds.nullable(), Seconds.nullable(), BodySchema]);
export type Segment = z.infer<typeof SegmentSchema>;

export const RoutesSchema = z.strictObject({
  format: z.literal(SNAPSHOT_FORMAT),
  /** Names of the packs the blobs are in, with each one's size in bytes. */
  packs: z.array(z.tuple([z.string().regex(PACK_NAME_RE), Count])),
  blobs: z.array(BlobEntrySchema),
  /** Path (`/v1/...`) -> its segments in time order, not overlapping. */
  resources: z.record(z.string(), z.array(SegmentSchema)),
  /** Product ID -> index of its detail blob, for search results (present for every product that is ever served). */
  products: z.record(z.string(), z.number().int().nonnegative()),
  /** Every instant (epoch seconds) at which some resource changes, ascending. */
  boundaries: z.array(Seconds),
});
export type Routes = z.infer<typeof RoutesSchema>;

export const ManifestSchema = z.strictObject({
  format: z.literal(SNAPSHOT_FORMAT),
  id: z.string().regex(/^[0-9A-Za-z-]{1,80}$/),
  built_at: z.string(),
  /** sha256 of the catalog's input files: a build whose catalog and options are unchanged has nothing to do. */
  catalog_digest: z.string(),
  /** sha256 of the build options that shape the output (base URL, format). */
  options_digest: z.string(),
  base_url: z.string(),
  /** Where the catalog came from: "sample" when `npm start` generated it. */
  source: z.string(),
  /** The last instant at which anything changes; after it every sale has ended. null when some sale is open-ended. */
  live_until: Seconds.nullable(),
  counts: z.strictObject({ sales: z.number(), products: z.number(), resources: z.number(), blobs: z.number() }),
  /** sha256 (hex) of routes.json and search.idx, checked when the snapshot is loaded. */
  files: z.record(z.string(), z.string()),
});
export type Manifest = z.infer<typeof ManifestSchema>;

/** The file-system path of a snapshot directory. */
export function snapshotDir(dataDir: string, id: string): string {
  return join(dataDir, SNAPSHOTS_DIR, id);
}
