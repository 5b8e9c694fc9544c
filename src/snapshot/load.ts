// Loads a published snapshot into memory, checking every file against its recorded digest.
import { readFile, readlink, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { BodyCache } from "./body-cache.ts";
import type { BlobRef } from "./body-cache.ts";
import { closePacks, openPack } from "./packs.ts";
import type { PackFile } from "./packs.ts";
import { SnapshotError } from "./snapshot-error.ts";
import { loadSearchIndex } from "../search/index-format.ts";
import type { SearchIndex } from "../search/index-format.ts";
import type { Manifest, Routes } from "./format.ts";
import {
  packPath,
  CURRENT_LINK,
  DOCUMENTS,
  SNAPSHOT_FORMAT,
  MANIFEST_FILE,
  ManifestSchema,
  ROUTES_FILE,
  RoutesSchema,
  SEARCH_INDEX_FILE,
  snapshotDir,
  sha256Hex,
} from "./format.ts";

/** A resource body in memory, with its precomputed ETag. */
export interface LoadedBlob {
  hash: string;
  identity: Buffer;
  gzip: Buffer | null;
  br: Buffer | null;
  /** Byte offsets of the closing quotes of page links, where `&affid=` is spliced in. */
  links: number[];
  /** Compressed sizes of the gzip variant's pieces but the last (split at `links`; see src/compress/gzip-members.ts). */
  gzipPieces: number[];
  /** The ETag header values for identity, gzip and br, made on first use (respond.ts). */
  etags: [string, string, string] | null;
}

/** A resource's body in one state: a blob, or a sale list composed of its sales' blobs (read through `bodies`). */
type LoadedBody = BlobRef | { sales: BlobRef[] };

export interface LoadedSegment {
  from: number | null;
  to: number | null;
  body: LoadedBody;
}

/** A document served without a key (the OpenAPI document, the reference page): its body and its type. */
interface LoadedDocument {
  blob: LoadedBlob;
  type: string;
}

export interface LoadedSnapshot {
  id: string;
  manifest: Manifest;
  resources: Map<string, LoadedSegment[]>;
  products: Map<number, BlobRef>;
  boundaries: number[];
  search: SearchIndex;
  /** The documents, by path (DOCUMENTS). */
  documents: Map<string, LoadedDocument>;
  /** The bodies' bytes: `bodies.get(ref)` (shared with the snapshots loaded after this one). */
  bodies: BodyCache;
  /** Every blob by hash, and every pack by name (open), so that the next snapshot can reuse what it shares with this one. */
  blobs: Map<string, BlobRef>;
  packs: Map<string, PackFile>;
}

export { SnapshotError } from "./snapshot-error.ts";

/** The ID of the published snapshot (the target of `current`), or null when nothing is published. */
export async function currentSnapshotId(dataDir: string): Promise<string | null> {
  try {
    return basename(await readlink(join(dataDir, CURRENT_LINK)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

export async function loadManifest(dataDir: string, id: string): Promise<Manifest> {
  const path = join(snapshotDir(dataDir, id), MANIFEST_FILE);
  let value: unknown;
  try {
    value = JSON.parse((await readOrFail(path, "manifest")).toString("utf8"));
  } catch (err) {
    if (err instanceof SnapshotError) throw err;
    throw new SnapshotError(`${path}: manifest is not valid JSON (corrupt or partly written)`);
  }
  const parsed = ManifestSchema.safeParse(value);
  if (!parsed.success) {
    const format = (value as { format?: unknown } | null)?.format;
    if (format !== SNAPSHOT_FORMAT)
      throw new SnapshotError(
        `${path}: snapshot format ${String(format)}, but this server reads format ${SNAPSHOT_FORMAT}: rebuild the snapshot`,
      );
    // Format 3 as first written kept the search documents' digest under `files`: such a snapshot needs a rebuild too.
    if (value !== null && typeof value === "object" && !("search_docs_digest" in value))
      throw new SnapshotError(
        `${path}: snapshot format ${SNAPSHOT_FORMAT} without search_docs_digest (written before it was added): rebuild the snapshot`,
      );
    const issue = parsed.error.issues[0];
    throw new SnapshotError(`${path}: invalid manifest: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  return parsed.data;
}

/**
 * Loads snapshot `id` (default: the published one) and everything it references. Blobs `previous` already
 * holds are reused, not read again. Throws SnapshotError on anything missing, corrupt or of another format.
 */
export async function loadSnapshot(
  dataDir: string,
  options: { id?: string; previous?: LoadedSnapshot | null; bodies?: BodyCache } = {},
): Promise<LoadedSnapshot> {
  const id = options.id ?? (await currentSnapshotId(dataDir));
  if (id === null) throw new SnapshotError(`no snapshot is published in ${dataDir} (run the build first)`);
  const dir = snapshotDir(dataDir, id);
  const manifest = await loadManifest(dataDir, id);

  // The search index before the routes (see INDEX_FIRST).
  const search = await loadRecordedIndex(dir, manifest);
  const routesPath = join(dir, ROUTES_FILE);
  const routes = parseRoutes(routesPath, await readRecorded(dir, manifest, ROUTES_FILE, "routes"));
  const documents = await loadDocuments(dir, manifest);

  const previous = options.previous;
  const packs = new Map<string, PackFile>();
  // The packs this load opens are closed again if it fails (a blob outside its pack, another pack corrupt): a
  // server that retries a broken snapshot must not run out of file descriptors.
  const opened: PackFile[] = [];
  let blobList: BlobRef[];
  try {
    for (const [name, size] of routes.packs) {
      const known = previous?.packs.get(name);
      if (known && known.fd >= 0) packs.set(name, known);
      else {
        const pack = await openPack(dataDir, name, size);
        opened.push(pack);
        packs.set(name, pack);
      }
    }
    blobList = routes.blobs.map(([hash, size, gzSize, brSize, links, packNo, offset, gzipPieces]): BlobRef => {
      const pack = packs.get(routes.packs[packNo]?.[0] ?? "");
      const known = previous?.blobs.get(hash);
      // The same bytes in the same pack: the previous snapshot's ref, with its bytes if the cache holds them.
      if (known && known.pack === pack) return known;
      checkInPack(routesPath, hash, offset + size + gzSize + brSize, pack?.size);
      return { hash, size, gzSize, brSize, links, gzipPieces, pack: pack!, offset, loaded: null, used: false };
    });
  } catch (err) {
    closePacks(opened);
    throw err;
  }

  const blobAt = (i: number) => blobList[i]!; // parseRoutes checked every reference
  const resources = new Map<string, LoadedSegment[]>();
  for (const [path, segments] of Object.entries(routes.resources)) {
    resources.set(
      path,
      segments.map(([from, to, body]) => ({
        from,
        to,
        body: typeof body === "number" ? blobAt(body) : { sales: body.sales.map(blobAt) },
      })),
    );
  }
  const products = new Map<number, BlobRef>();
  for (const [pid, blob] of Object.entries(routes.products)) products.set(Number(pid), blobAt(blob));

  return {
    id,
    manifest,
    resources,
    products,
    boundaries: routes.boundaries,
    search,
    documents,
    bodies: options.bodies ?? previous?.bodies ?? new BodyCache(),
    packs,
    blobs: new Map(blobList.map((b) => [b.hash, b])),
  };
}

/** Closes the packs of `old` that `current` does not use (after a reload, once no request can still read them). */
export function closeUnusedPacks(old: LoadedSnapshot, current: LoadedSnapshot | null): void {
  closePacks([...old.packs].filter(([name, pack]) => current?.packs.get(name) !== pack).map(([, pack]) => pack));
}

/**
 * Checks a snapshot the build has just written, as far as a server's load depends on the disk: the manifest, the
 * routes and search index against their recorded digests (and the index loads), and every pack it names present,
 * of its size, holding every blob it is said to hold. Packs named in `trusted` (kept from the published snapshot,
 * whose build verified their content against their names) are checked by size; the others are read and hashed.
 */
export async function verifySnapshot(
  dataDir: string,
  id: string,
  trusted: ReadonlySet<string> = new Set(),
): Promise<void> {
  const dir = snapshotDir(dataDir, id);
  const manifest = await loadManifest(dataDir, id);
  await loadRecordedIndex(dir, manifest); // before the routes (see INDEX_FIRST)
  const routesPath = join(dir, ROUTES_FILE);
  const routes = parseRoutes(routesPath, await readRecorded(dir, manifest, ROUTES_FILE, "routes"));
  await loadDocuments(dir, manifest);
  for (const [name, size] of routes.packs) {
    const path = join(dataDir, packPath(name));
    if (!trusted.has(name)) closePacks([await openPack(dataDir, name, size)]);
    else {
      const actual = await stat(path).then(
        (s) => s.size,
        () => -1,
      );
      if (actual !== size)
        throw new SnapshotError(`${path}: ${actual < 0 ? "missing" : `${actual} bytes, expected ${size}`}`);
    }
  }
  for (const [hash, size, gzSize, brSize, , packNo, offset] of routes.blobs)
    checkInPack(routesPath, hash, offset + size + gzSize + brSize, routes.packs[packNo]?.[1]);
}

/**
 * routes.json checked as a server needs it: its schema, and every blob a resource or product refers to present.
 * The build's verification and a server's load use this one function, so the build never publishes routes a
 * server would refuse.
 */
function parseRoutes(routesPath: string, bytes: Buffer): Routes {
  const parsed = RoutesSchema.safeParse(JSON.parse(bytes.toString("utf8")) as unknown);
  if (!parsed.success) throw new SnapshotError(`${routesPath}: invalid routes: ${parsed.error.issues[0]?.message}`);
  const routes = parsed.data;
  const check = (i: number) => {
    if (i >= routes.blobs.length) throw new SnapshotError(`${routesPath}: refers to blob ${i}, which does not exist`);
  };
  for (const segments of Object.values(routes.resources))
    for (const [, , body] of segments) {
      if (typeof body === "number") check(body);
      else body.sales.forEach(check);
    }
  for (const blob of Object.values(routes.products)) check(blob);
  return routes;
}

/** A file of the snapshot, checked against the digest its manifest records. */
async function readRecorded(dir: string, manifest: Manifest, file: string, what: string): Promise<Buffer> {
  const path = join(dir, file);
  const bytes = await readOrFail(path, what);
  if (sha256Hex(bytes) !== (manifest.files as Record<string, string | undefined>)[file])
    throw new SnapshotError(`${path}: digest does not match the manifest (corrupt or partly written)`);
  return bytes;
}

/** The documents and their gzip and brotli, each checked against its digest. */
async function loadDocuments(dir: string, manifest: Manifest): Promise<Map<string, LoadedDocument>> {
  const documents = new Map<string, LoadedDocument>();
  for (const [path, { file, type }] of Object.entries(DOCUMENTS)) {
    const [identity, gzip, br] = await Promise.all(
      [file, `${file}.gz`, `${file}.br`].map((f) => readRecorded(dir, manifest, f, "document")),
    );
    const blob = { hash: sha256Hex(identity!).slice(0, 32), identity: identity!, gzip: gzip!, br: br! };
    documents.set(path, { type, blob: { ...blob, links: [], gzipPieces: [], etags: null } });
  }
  return documents;
}

// INDEX_FIRST: the search index is loaded before routes.json is parsed. Its buffers (0.5 GB at 1,000,000 sample
// products) make V8 collect the whole heap as they grow, and after the routes that heap is 1.4 GB of parsed routes:
// the index then took 9.1-9.4 s to load (8 mark-compacts of 0.8-1.4 s each), against 1.4 s before them.

/** The snapshot's search index, checked against its digest and loaded. */
async function loadRecordedIndex(dir: string, manifest: Manifest): Promise<SearchIndex> {
  const bytes = await readRecorded(dir, manifest, SEARCH_INDEX_FILE, "search index");
  try {
    return loadSearchIndex(bytes);
  } catch (err) {
    throw new SnapshotError(`${join(dir, SEARCH_INDEX_FILE)}: ${(err as Error).message}`);
  }
}

/** A blob must end within its pack (whose size is undefined when the routes name no such pack). */
function checkInPack(routesPath: string, hash: string, end: number, packSize: number | undefined): void {
  if (packSize === undefined || end > packSize)
    throw new SnapshotError(`${routesPath}: blob ${hash} lies outside its pack`);
}

async function readOrFail(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new SnapshotError(`${path}: cannot read ${what}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}
