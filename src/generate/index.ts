// The build: catalog -> validated plan -> blobs, routes and search index -> verified, atomically published snapshot.
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { ProblemList } from "../catalog/problems.ts";
import { CATALOG_RULES_VERSION, digestCatalog, loadCatalog } from "../catalog/load.ts";
import type { Catalog } from "../catalog/load.ts";
import type { BlobRecord, LinesFile, Manifest, Routes } from "../snapshot/format.ts";
import {
  blobEntry,
  LINES_FILE,
  MANIFEST_FILE,
  ROUTES_FILE,
  SEARCH_INDEX_FILE,
  SNAPSHOT_FORMAT,
  snapshotDir,
  sha256Hex,
} from "../snapshot/format.ts";
import { codeDigest } from "./code-digest.ts";
import { makeDocuments } from "./documents.ts";
import type { DocumentFiles } from "./documents.ts";
import { acquireBuildLock } from "./lock.ts";
import { MAX_PACK_BYTES, writePack } from "./pack-writer.ts";
import type { WritePackResult } from "./pack-writer.ts";
import { planSnapshot, renderKey } from "./plan.ts";
import type { Plan } from "./plan.ts";
import type { KnownBlobs } from "./previous.ts";
import { readPrevious } from "./previous.ts";
import { makeSearchIndex } from "./search-index.ts";
import type { SearchIndexFiles } from "./search-index.ts";
import { cleanLeftovers, DEFAULT_KEEP, pruneSnapshots, verifyAndPublish, writeSnapshotFiles } from "./publish.ts";

export interface BuildOptions {
  /** The catalog directory (catalog.json, sales*.ndjson, products*.ndjson). */
  catalogDir: string;
  /** The data directory snapshots are published in. */
  dataDir: string;
  /** API base URL for the `sale`, `product` and `products[]` links, no trailing slash. */
  baseUrl: string;
  /**
   * The developer portal's public URL, no trailing slash: the reference page sends partners there for a key. Default
   * none: the page says that the API's operator issues keys.
   */
  portalUrl?: string | undefined;
  /** Where the catalog came from, recorded in the manifest. Default "catalog". */
  source?: string;
  /** Snapshots kept for rollback. Default DEFAULT_KEEP (3). */
  keep?: number;
  /** Rebuild even when the catalog and options are unchanged. Default false. */
  force?: boolean;
  /** Clock, epoch ms. Default Date.now. */
  now?: () => number;
  /** Writes in flight. Default DEFAULT_WRITE_CONCURRENCY (64). */
  concurrency?: number;
  /** Bytes past which the pack writer starts a new pack. Default MAX_PACK_BYTES (1 GiB). */
  maxPackBytes?: number;
  /** A directory of rendered reference pages by digest, shared by builds (tests use one). Default: none. */
  docsCacheDir?: string;
  /** Called as the build advances: a phase name and counts. */
  onProgress?: (phase: string, done: number, total: number) => void;
}

export interface BuildResult {
  /** The published snapshot: the new one, or the unchanged current one. */
  id: string;
  changed: boolean;
  sales: number;
  products: number;
  resources: number;
  blobs: number;
  /** Blobs written to the new pack (compressed, or copied on a repack). */
  blobsWritten: number;
  /** Of those, blobs copied byte for byte from an old pack on a repack. */
  blobsCopied: number;
  /** Whether every blob was written into new packs (see shouldRepack) rather than kept where it was. */
  repacked: boolean;
  filesWritten: number;
  bytesWritten: number;
  searchIndexReused: boolean;
  /** Search documents whose text was taken analysed from the previous build rather than tokenized (0 when the index is reused). */
  searchTextsReused: number;
  /** Product bodies taken from the previous snapshot without rendering (same line, same render key). */
  productsReused: number;
  durationMs: number;
  warnings: ProblemList;
}

/** Builds and publishes a snapshot; throws CatalogError (nothing written) when the catalog has errors. */
export async function buildSnapshot(options: BuildOptions): Promise<BuildResult> {
  const now = options.now ?? Date.now;
  const started = now();
  await mkdir(options.dataDir, { recursive: true });
  const release = await acquireBuildLock(options.dataDir);
  try {
    await cleanLeftovers(options.dataDir);
    // What the build holds in memory (the catalog, the plan, the published snapshot's tables: a gigabyte at 100,000
    // products) lives in the frames of stage() and its steps only, so that verification runs, and collects garbage,
    // without it.
    const staged = await stage(options, now);
    if (staged.tmpId !== null) {
      options.onProgress?.("verify", 0, 1);
      await verifyAndPublish(options.dataDir, staged.tmpId, staged.result.id, staged.kept);
      options.onProgress?.("prune", 0, 1);
      await pruneSnapshots(options.dataDir, options.keep ?? DEFAULT_KEEP);
    }
    return { ...staged.result, durationMs: now() - started };
  } finally {
    await release();
  }
}

/** A build up to its verification: the snapshot written under a temporary name (tmpId), or null when unchanged. */
interface Staged {
  tmpId: string | null;
  /** Packs the snapshot keeps from the published one (see verifyAndPublish). */
  kept: Set<string>;
  result: Omit<BuildResult, "durationMs">;
}

/** Everything buildSnapshot does before verifying and publishing (the lock held). */
async function stage(options: BuildOptions, now: () => number): Promise<Staged> {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  options.onProgress?.("catalog", 0, 1);
  // The build's own code counts as an option: an upgrade that changes what any resource renders to (an order,
  // a field) rebuilds even when the catalog has not changed. Its sources unreadable: never skip.
  const code = codeDigest([new URL("./index.ts", import.meta.url)]) ?? randomUUID();
  const portalUrl = options.portalUrl?.replace(/\/+$/, "");
  const optionsDigest = sha256Hex(JSON.stringify({ format: SNAPSHOT_FORMAT, baseUrl, code, portalUrl }));
  // Unchanged catalog and options: nothing to do, decided from the files' digest before parsing a line (and
  // before reading more of the published snapshot than its manifest).
  const catalogDigest = await digestCatalog(options.catalogDir);
  const previous = await readPrevious(
    options.dataDir,
    (m) => !options.force && m.catalog_digest === catalogDigest && m.options_digest === optionsDigest,
  );
  if (previous?.unchanged) return unchangedStage(previous.id, previous.manifest);
  // The OpenAPI document and its reference page, made alongside the rest (the page may take seconds to render).
  const documents = makeDocuments({
    baseUrl,
    portalUrl,
    previous: previous ? { dir: snapshotDir(options.dataDir, previous.id), manifest: previous.manifest } : null,
    docsCacheDir: options.docsCacheDir,
  });
  documents.catch(() => {}); // awaited below; a build that fails before then reports its own error
  const lines = options.force ? null : (previous?.lines ?? null);
  const catalog = await loadCatalog(options.catalogDir, {
    now: now(),
    digest: catalogDigest,
    ...(lines?.rules === CATALOG_RULES_VERSION ? { validLines: new Set(lines.products.keys()) } : {}),
  });
  const base = { sales: catalog.sales.length, products: catalog.products.size, warnings: catalog.problems };
  const packed = await renderAndPack(options, catalog, baseUrl, lines, previous?.blobs ?? new Map());

  // The search index depends only on the documents: reuse the previous one when they are the same.
  options.onProgress?.("index", 0, 1);
  const search = await makeSearchIndex(
    packed.plan.searchDocs,
    previous && {
      dir: snapshotDir(options.dataDir, previous.id),
      index: previous.searchIndex,
      texts: !options.force,
    },
  );
  options.onProgress?.("documents", 0, 1);
  const docs = await documents;
  return writeStaged(options, now, { ...packed, baseUrl, optionsDigest, catalog, base, search, docs });
}

/** The published snapshot, unchanged, as the build's result: nothing written. */
function unchangedStage(id: string, m: Manifest): Staged {
  return {
    tmpId: null,
    kept: new Set(),
    result: {
      id,
      changed: false,
      sales: m.counts.sales,
      products: m.counts.products,
      resources: m.counts.resources,
      blobs: m.counts.blobs,
      blobsWritten: 0,
      blobsCopied: 0,
      repacked: false,
      filesWritten: 0,
      bytesWritten: 0,
      searchIndexReused: true,
      searchTextsReused: 0,
      productsReused: m.counts.products,
      warnings: new ProblemList(),
    },
  };
}

/** What renderAndPack makes: the plan, its blobs placed in packs, and the routes to them. */
interface Packed {
  plan: Plan;
  /** The render key the products were rendered under (renderKey), recorded with their lines. */
  key: string | null;
  written: WritePackResult;
  /** Whether every blob was written into new packs (see shouldRepack). */
  repack: boolean;
  /** Packs the snapshot keeps from the published one. */
  kept: Set<string>;
  routes: Routes;
}

/**
 * Renders every resource (products whose line is unchanged reused unrendered) and places the blobs in packs; lets
 * go of the catalog's products once they are written.
 */
async function renderAndPack(
  options: BuildOptions,
  catalog: Catalog,
  baseUrl: string,
  lines: { render: string | null; products: ReadonlyMap<string, string> } | null,
  known: KnownBlobs,
): Promise<Packed> {
  options.onProgress?.("render", 0, 1);
  const linkBase = { baseUrl, siteUrl: catalog.meta.site_url };
  const key = renderKey(linkBase);
  // Products whose line is unchanged keep the blob they rendered to last time, unrendered.
  const plan = planSnapshot(
    catalog,
    linkBase,
    key !== null && lines?.render === key ? { rendered: lines.products, known } : undefined,
  );
  // A repack writes every blob into new packs: the known ones (those reused unrendered among them) are copied
  // from their old packs as they are.
  const repack = shouldRepack(plan.blobs, known, options.maxPackBytes ?? MAX_PACK_BYTES);
  const written = await writePack(options.dataDir, plan.blobs, plan.body, known, {
    repack,
    concurrency: options.concurrency,
    maxPackBytes: options.maxPackBytes,
    onProgress: (done) => options.onProgress?.("blobs", done, plan.blobs.length),
  });
  // The parsed products were needed to render: let them go (and the render closures holding them) before the
  // search index is built, which was the build's peak (at 1,000,000 sample products they are 3.5 GB of heap).
  plan.dropBodies();
  catalog.products.clear();
  catalog.productLines.clear();
  const routes: Routes = {
    format: SNAPSHOT_FORMAT,
    packs: written.packs,
    blobs: written.blobs.map(blobEntry),
    ...plan.routes,
  };
  // Packs kept from the published snapshot were verified against their names when their build wrote them: the
  // check here is their size; the new pack is read back and hashed. (A server hashes every pack it loads.)
  const kept = repack ? new Set<string>() : new Set([...known.values()].map((k) => k.pack));
  return { plan, key, written, repack, kept, routes };
}

/** Everything a changed build has made by the time it writes its snapshot's files. */
interface Made extends Packed {
  baseUrl: string;
  optionsDigest: string;
  /** The catalog, its products let go (see renderAndPack). */
  catalog: Catalog;
  /** The counts and warnings taken from the catalog while whole. */
  base: Pick<BuildResult, "sales" | "products" | "warnings">;
  search: SearchIndexFiles;
  docs: DocumentFiles;
}

/** Writes the snapshot's files but its packs under a temporary name (writeSnapshotFiles): its manifest first made. */
async function writeStaged(options: BuildOptions, now: () => number, made: Made): Promise<Staged> {
  const { plan, key, written, repack, kept, routes, catalog, base, search, docs } = made;
  const index = search.index;
  const routesBytes = Buffer.from(JSON.stringify(routes));
  const linesBytes = Buffer.from(
    JSON.stringify({ rules: CATALOG_RULES_VERSION, render: key, products: plan.productLines } satisfies LinesFile),
  );
  const builtAt = new Date(now());
  const id = `${builtAt.toISOString().replace(/[-:.]/g, "")}-${catalog.digest.slice(0, 8)}`;
  const manifest: Manifest = {
    format: SNAPSHOT_FORMAT,
    id,
    built_at: builtAt.toISOString(),
    catalog_digest: catalog.digest,
    options_digest: made.optionsDigest,
    base_url: made.baseUrl,
    source: options.source ?? "catalog",
    live_until: catalog.sales.some((s) => s.endsAt === null) ? null : Math.max(0, ...routes.boundaries),
    counts: {
      sales: base.sales,
      products: Object.keys(routes.products).length,
      resources: Object.keys(routes.resources).length,
      blobs: routes.blobs.length,
    },
    search_docs_digest: search.docsDigest,
    docs_page_digest: docs.pageDigest,
    files: {
      [ROUTES_FILE]: sha256Hex(routesBytes),
      [SEARCH_INDEX_FILE]: sha256Hex(index),
      [LINES_FILE]: sha256Hex(linesBytes),
      ...docs.digests,
    },
  };
  const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 2) + "\n");
  options.onProgress?.("publish", 0, 1);
  const tmpId = await writeSnapshotFiles(
    options.dataDir,
    id,
    {
      [MANIFEST_FILE]: manifestBytes,
      [ROUTES_FILE]: routesBytes,
      [LINES_FILE]: linesBytes,
      ...search.files,
      ...docs.files,
    },
    { ...search.linked, ...docs.linked },
  );
  return {
    tmpId,
    kept,
    result: {
      ...base,
      id,
      changed: true,
      resources: manifest.counts.resources,
      blobs: routes.blobs.length,
      blobsWritten: written.written,
      blobsCopied: written.copied,
      repacked: repack,
      filesWritten: written.files + 3 + Object.keys(search.files).length + Object.keys(docs.files).length,
      bytesWritten:
        written.bytes +
        manifestBytes.length +
        routesBytes.length +
        linesBytes.length +
        [...Object.values(search.files), ...Object.values(docs.files)].reduce((n, b) => n + b.length, 0),
      searchIndexReused: search.reused,
      searchTextsReused: search.textsReused,
      productsReused: plan.reused,
    },
  };
}

/** Most packs one snapshot may span before its blobs are all written into new packs (more for a large one, below). */
export const MAX_PACKS = 8;

/**
 * Whether to write every blob anew instead of reusing the previous packs: when reusing would spread the snapshot
 * over more than MAX_PACKS packs, plus one for each maxPackBytes the kept packs hold (a full build of a large
 * catalog writes several packs of that size, and should not be repacked a few small rebuilds later), or when less
 * than half of the bytes of the packs it would keep are still used.
 */
function shouldRepack(blobs: readonly BlobRecord[], known: KnownBlobs, maxPackBytes: number): boolean {
  const packSizes = new Map<string, number>();
  let live = 0;
  for (const { hash } of blobs) {
    const k = known.get(hash);
    if (!k) continue;
    packSizes.set(k.pack, k.packSize);
    live += k.record.size + k.record.gzipSize + k.record.brSize;
  }
  const total = [...packSizes.values()].reduce((a, b) => a + b, 0);
  return packSizes.size >= MAX_PACKS + Math.floor(total / maxPackBytes) || live < total / 2;
}
