// The snapshot on disk, shared by build (writes it) and serve (reads it): layout, manifest schema, format version.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { z } from "zod";
import { endpointsAnswering } from "../api/routing.ts";

/** Bumped whenever the manifest or routes change incompatibly; the handler refuses any other version. */
export const SNAPSHOT_FORMAT = 4;

/**
 * Data directory layout:
 *   current                 symlink -> snapshots/<id>, switched by an atomic rename
 *   snapshots/<id>/         manifest.json, routes.json, search.idx, product-lines.json, and the documents served
 *                           without a key (openapi.json, docs.html), each with its .gz and .br
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
export const LINES_FILE = "product-lines.json";

/**
 * The documents served without a key, by path (the endpoints that answer "document": the OpenAPI document and its
 * reference page; format 4 added them). Each is three files, the body and its gzip and brotli (`<file>.gz`,
 * `<file>.br`), recorded under `files`.
 */
export const DOCUMENTS: Readonly<Record<string, { file: string; type: string }>> = Object.fromEntries(
  endpointsAnswering("document").map((e) => [e.path, { file: e.file!.name, type: e.file!.type }]),
);

/** Every file of the documents: each one's body, gzip and brotli. */
export const DOCUMENT_FILES = Object.values(DOCUMENTS).flatMap(({ file }) => [file, `${file}.gz`, `${file}.br`]);

/** Path of a pack (relative to the data directory). */
export function packPath(name: string): string {
  return join(PACKS_DIR, `${name}.pack`);
}

/** Pack names: the first 32 hex digits of the sha256 of the pack's bytes. */
const PACK_NAME_RE = /^[0-9a-f]{32}$/;

/** Blob hashes: the first 32 hex digits (128 bits) of the sha256 of the identity bytes. */
const BLOB_HASH_RE = /^[0-9a-f]{32}$/;

/** The sha256 of `data` in hex: the digests of the manifest, pack names (their first 32 digits) and blob hashes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

const Seconds = z.number().int();

const Count = z.number().int().nonnegative();
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * One blob: [hash, size, gzipSize, brotliSize, pageLinkOffsets, pack, offset, gzipPieces]. Its bytes are at
 * `offset` in pack number `pack` (of `Routes.packs`): identity, then gzip, then brotli. A compressed size of 0 means
 * that variant was not worth storing. The link offsets are the byte positions of the closing quote of each page
 * link (`url`, `sale_url`), where `&affid=...` is spliced in. The gzip variant's deflate data is split at those
 * offsets into pieces compressed on their own (src/compress/gzip-members.ts); `gzipPieces` are the compressed
 * sizes of every piece but the last (empty without a gzip variant).
 * Format 3 added `gzipPieces`.
 */
export type BlobEntry = [
  hash: string,
  size: number,
  gzipSize: number,
  brotliSize: number,
  links: number[],
  pack: number,
  offset: number,
  gzipPieces: number[],
];

/** A blob in the build's memory: a {@link BlobEntry} with its fields named. */
export interface BlobRecord {
  hash: string;
  /** Bytes of the identity body. */
  size: number;
  /** Bytes of the gzip variant (0: none). */
  gzipSize: number;
  /** Bytes of the brotli variant (0: none). */
  brSize: number;
  /** Byte offsets of the closing quote of each page link. */
  links: number[];
  /** Index of its pack in `Routes.packs`. */
  pack: number;
  /** Where its identity bytes start in that pack. */
  offset: number;
  /** Compressed sizes of the gzip variant's pieces but the last. */
  gzipPieces: number[];
}

/** The record of an entry read from routes.json. */
export function blobRecord([hash, size, gzipSize, brSize, links, pack, offset, gzipPieces]: BlobEntry): BlobRecord {
  return { hash, size, gzipSize, brSize, links, pack, offset, gzipPieces };
}

/** The entry routes.json holds for a record. */
export function blobEntry(b: BlobRecord): BlobEntry {
  return [b.hash, b.size, b.gzipSize, b.brSize, b.links, b.pack, b.offset, b.gzipPieces];
}

/**
 * A body: one blob (its index in `blobs`), or a sale list composed of sale blobs: `{"sales":[` + parts joined
 * with `,` + `]}`. Lists are composed by the handler so that the snapshot does not repeat every sale in every
 * state of every list.
 */
export type Body = number | { sales: number[] };

/** [from, to, body]: the resource is `body` for from <= t < to (epoch seconds; null = unbounded); 404 outside every segment. */
export type Segment = [from: number | null, to: number | null, body: Body];

// The three large parts of routes.json (a million entries each at 1,000,000 products) are checked by these loops,
// the one definition of their entries' rules (counts are non-negative integers, instants integers, hashes 32 hex
// digits, a sale list has no field but `sales`): zod's pass over them took 3.3-4.7 s of a 1,000,000-product
// server's start-up, the loops a tenth of a second.
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;
const isCounts = (v: unknown): v is number[] => Array.isArray(v) && v.every(isCount);
const isSeconds = (v: unknown): boolean => v === null || (typeof v === "number" && Number.isInteger(v));

function isBlobEntry(v: unknown): v is BlobEntry {
  return (
    Array.isArray(v) &&
    v.length === 8 &&
    typeof v[0] === "string" &&
    BLOB_HASH_RE.test(v[0]) &&
    isCount(v[1]) &&
    isCount(v[2]) &&
    isCount(v[3]) &&
    isCounts(v[4]) &&
    isCount(v[5]) &&
    isCount(v[6]) &&
    isCounts(v[7])
  );
}

function isSegment(v: unknown): v is Segment {
  if (!Array.isArray(v) || v.length !== 3 || !isSeconds(v[0]) || !isSeconds(v[1])) return false;
  const body: unknown = v[2];
  if (isCount(body)) return true;
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  return keys.length === 1 && keys[0] === "sales" && isCounts((body as { sales: unknown }).sales);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function everyValue(v: unknown, ok: (x: unknown) => boolean): boolean {
  if (!isPlainObject(v)) return false;
  for (const key in v) if (!ok(v[key])) return false;
  return true;
}

export const RoutesSchema = z.strictObject({
  format: z.literal(SNAPSHOT_FORMAT),
  /** Names of the packs the blobs are in, with each one's size in bytes. */
  packs: z.array(z.tuple([z.string().regex(PACK_NAME_RE), Count])),
  /** A BlobEntry each (isBlobEntry). */
  blobs: z.custom<BlobEntry[]>(
    (v) => Array.isArray(v) && v.every(isBlobEntry),
    "blobs: expected [hash, size, gzip size, brotli size, [link offsets], pack, offset, [gzip pieces]] entries",
  ),
  /** Path (`/v1/...`) -> its segments (isSegment) in time order, not overlapping. */
  resources: z.custom<Record<string, Segment[]>>(
    (v) => everyValue(v, (segments) => Array.isArray(segments) && segments.every(isSegment)),
    "resources: expected path -> [from, to, blob or {sales: [blobs]}] segments",
  ),
  /** Product ID -> index of its detail blob, for search results (present for every product that is ever served). */
  products: z.custom<Record<string, number>>(
    (v) => everyValue(v, isCount),
    "products: expected product ID -> blob index",
  ),
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
  /**
   * sha256 of the search documents, the index format and the index builder's code: the next build reuses
   * search.idx when its documents give the same digest.
   */
  search_docs_digest: Sha256,
  /**
   * sha256 of what decides the reference page's bytes (the OpenAPI document, the page's code, the Redocly CLI's
   * version): the next build reuses docs.html and its variants when it gives the same digest.
   */
  docs_page_digest: Sha256,
  /**
   * sha256 of each of the snapshot's own files: routes.json, search.idx and the documents (checked at load),
   * product-lines.json.
   */
  files: z.strictObject({
    [ROUTES_FILE]: Sha256,
    [SEARCH_INDEX_FILE]: Sha256,
    [LINES_FILE]: Sha256,
    ...(Object.fromEntries(DOCUMENT_FILES.map((f) => [f, Sha256])) as Record<string, typeof Sha256>),
  }),
});
export type Manifest = z.infer<typeof ManifestSchema>;

/**
 * `product-lines.json`: every valid product line's digest with the hash of the blob its product rendered to (""
 * when it is on no sale), and the catalog rules and render key they were checked and rendered under (the render
 * key is null when the rendering code could not be digested). The next build skips the schema check of those
 * lines while the rules are the same, and the render of those products while the key is too.
 */
export const LinesFileSchema = z.strictObject({
  rules: z.number().int(),
  render: z.string().nullable(),
  // A loop, not z.record(z.string(), z.string()): at 100,000 lines that parse took 0.35-0.55 s (more than the
  // JSON.parse of the file), the loop 0.04-0.08 s, on a busy 2-core machine, in every incremental build.
  products: z.custom<Record<string, string>>(isStringRecord, "expected an object of strings"),
});
export type LinesFile = z.infer<typeof LinesFileSchema>;

function isStringRecord(value: unknown): value is Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  for (const v of Object.values(value)) if (typeof v !== "string") return false;
  return true;
}

/** The file-system path of a snapshot directory. */
export function snapshotDir(dataDir: string, id: string): string {
  return join(dataDir, SNAPSHOTS_DIR, id);
}
