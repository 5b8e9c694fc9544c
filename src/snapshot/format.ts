// The snapshot on disk, shared by build (writes it) and serve (reads it): layout, manifest schema, format version.
import { join } from "node:path";
import { z } from "zod";

/** Bumped whenever the manifest or routes change incompatibly; the handler refuses any other version. */
export const SNAPSHOT_FORMAT = 1;

/**
 * Data directory layout:
 *   current                 symlink -> snapshots/<id>, switched by an atomic rename
 *   snapshots/<id>/         manifest.json, routes.json, search.idx
 *   blobs/<aa>/<hash>.json  content-addressed resource bodies, shared by snapshots, with .gz and .br beside them
 */
export const CURRENT_LINK = "current";
export const SNAPSHOTS_DIR = "snapshots";
export const BLOBS_DIR = "blobs";
export const MANIFEST_FILE = "manifest.json";
export const ROUTES_FILE = "routes.json";
export const SEARCH_INDEX_FILE = "search.idx";

export type Encoding = "identity" | "gzip" | "br";
const ENCODING_SUFFIX: Record<Encoding, string> = { identity: "", gzip: ".gz", br: ".br" };

/** Path of a blob's file (relative to the data directory) in one encoding. */
export function blobPath(hash: string, encoding: Encoding = "identity"): string {
  return join(BLOBS_DIR, hash.slice(0, 2), `${hash}.json${ENCODING_SUFFIX[encoding]}`);
}

/** Blob hashes: the first 32 hex digits (128 bits) of the sha256 of the identity bytes. */
export const BLOB_HASH_RE = /^[0-9a-f]{32}$/;

const Hash = z.string().regex(BLOB_HASH_RE);
const Seconds = z.number().int();

/**
 * One blob: [hash, size, gzipSize, brotliSize, pageLinkOffsets]. A compressed size of 0 means that variant
 * was not worth storing. The offsets are the byte positions of the closing quote of each page link (`url`,
 * `sale_url`), where `&affid=...` is spliced in.
 */
export const BlobEntrySchema = z.tuple([Hash, z.number().int().nonnegative(), z.number().int().nonnegative(), z.number().int().nonnegative(), z.array(z.number().int().nonnegative())]);
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
