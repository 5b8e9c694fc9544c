// The build: catalog -> validated plan -> blobs, routes and search index -> verified, atomically published snapshot.
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { ProblemList } from "../catalog/problems.ts";
import { CATALOG_RULES_VERSION, digestCatalog, loadCatalog } from "../catalog/load.ts";
import { buildSearchIndex } from "../search/index-builder.ts";
import { SEARCH_INDEX_VERSION } from "../search/index-format.ts";
import type { BlobEntry, Manifest, Routes } from "../snapshot/format.ts";
import { MANIFEST_FILE, ROUTES_FILE, SEARCH_INDEX_FILE, SNAPSHOT_FORMAT, snapshotDir } from "../snapshot/format.ts";
import { currentSnapshotId, loadManifest, SnapshotError } from "../snapshot/load.ts";
import { writePack } from "./pack-writer.ts";
import type { KnownBlob, KnownBlobs } from "./pack-writer.ts";
import { codeDigest } from "./code-digest.ts";
import { acquireBuildLock } from "./lock.ts";
import { planSnapshot, renderKey } from "./plan.ts";
import { cleanLeftovers, DEFAULT_KEEP, pruneSnapshots, verifyAndPublish, writeSnapshotFiles } from "./publish.ts";

export interface BuildOptions {
  /** The catalog directory (catalog.json, sales*.ndjson, products*.ndjson). */
  catalogDir: string;
  /** The data directory snapshots are published in. */
  dataDir: string;
  /** API base URL for the `sale`, `product` and `products[]` links, no trailing slash. */
  baseUrl: string;
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
  blobsWritten: number;
  filesWritten: number;
  bytesWritten: number;
  searchIndexReused: boolean;
  /** Product bodies taken from the previous snapshot without rendering (same line, same render key). */
  productsReused: number;
  durationMs: number;
  warnings: ProblemList;
}

/** Builds and publishes a snapshot; throws CatalogError (nothing written) when the catalog has errors. */
export async function buildSnapshot(options: BuildOptions): Promise<BuildResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  await mkdir(options.dataDir, { recursive: true });
  const release = await acquireBuildLock(options.dataDir);
  try {
    await cleanLeftovers(options.dataDir);
    options.onProgress?.("catalog", 0, 1);
    const optionsDigest = sha256(JSON.stringify({ format: SNAPSHOT_FORMAT, baseUrl }));
    const previous = await loadPrevious(options.dataDir);
    // Unchanged catalog and options: nothing to do, decided from the files' digest before parsing a line.
    const catalogDigest = await digestCatalog(options.catalogDir);
    if (previous && !options.force && previous.manifest.catalog_digest === catalogDigest && previous.manifest.options_digest === optionsDigest) {
      const m = previous.manifest;
      return { id: previous.id, changed: false, sales: m.counts.sales, products: m.counts.products, resources: m.counts.resources, blobs: m.counts.blobs, blobsWritten: 0, filesWritten: 0, bytesWritten: 0, searchIndexReused: true, productsReused: m.counts.products, durationMs: now() - started, warnings: new ProblemList() };
    }
    const lines = options.force ? null : await previousLines(options.dataDir, previous);
    const catalog = await loadCatalog(options.catalogDir, { now: now(), digest: catalogDigest, ...(lines?.rules === CATALOG_RULES_VERSION ? { validLines: new Set(lines.products.keys()) } : {}) });
    const base = { sales: catalog.sales.length, products: catalog.products.size, warnings: catalog.problems };

    options.onProgress?.("render", 0, 1);
    const linkBase = { baseUrl, siteUrl: catalog.meta.site_url };
    const key = renderKey(linkBase);
    let known = await previousBlobs(options.dataDir, previous);
    // Products whose line is unchanged keep the blob they rendered to last time, unrendered.
    let plan = planSnapshot(catalog, linkBase, key !== null && lines?.render === key ? { rendered: lines.products, known } : undefined);
    if (shouldRepack(plan.routes.blobs, known)) {
      known = new Map();
      // Every blob is written anew into one pack: the ones reused unrendered need their bytes.
      if (plan.reused > 0) plan = planSnapshot(catalog, linkBase);
    }
    const { routes } = plan;
    const written = await writePack(options.dataDir, routes.blobs, plan.bodies, known, {
      concurrency: options.concurrency,
      onProgress: (done) => options.onProgress?.("blobs", done, routes.blobs.length),
    });
    routes.packs = written.packs;

    // The search index depends only on the documents: reuse the previous one when they are the same.
    options.onProgress?.("index", 0, 1);
    // The index is the documents run through the index builder's code (tokenizer, stemmer, format): a change to any
    // of it (its digest, as for the render key) must not reuse an old index. No digest (no sources): no reuse.
    const indexCode = codeDigest([new URL("../search/index-builder.ts", import.meta.url)]);
    const docsDigest = sha256(`${SEARCH_INDEX_VERSION}\0${indexCode}\0${JSON.stringify(plan.searchDocs)}`);
    const searchIndexReused = indexCode !== null && previous?.manifest.files["search-docs"] === docsDigest;
    const previousIndex = previous ? join(snapshotDir(options.dataDir, previous.id), SEARCH_INDEX_FILE) : "";
    const index = searchIndexReused ? await readFile(previousIndex) : buildSearchIndex(plan.searchDocs);
    const routesBytes = Buffer.from(JSON.stringify(routes));
    const builtAt = new Date(now());
    const id = `${builtAt.toISOString().replace(/[-:.]/g, "")}-${catalog.digest.slice(0, 8)}`;
    const manifest: Manifest = {
      format: SNAPSHOT_FORMAT,
      id,
      built_at: builtAt.toISOString(),
      catalog_digest: catalog.digest,
      options_digest: optionsDigest,
      base_url: baseUrl,
      source: options.source ?? "catalog",
      live_until: catalog.sales.some((s) => s.endsAt === null) ? null : Math.max(0, ...routes.boundaries),
      counts: { sales: base.sales, products: Object.keys(routes.products).length, resources: Object.keys(routes.resources).length, blobs: routes.blobs.length },
      files: { [ROUTES_FILE]: sha256(routesBytes), [SEARCH_INDEX_FILE]: sha256(index), "search-docs": docsDigest },
    };
    const linesBytes = Buffer.from(JSON.stringify({ rules: CATALOG_RULES_VERSION, render: key, products: plan.productLines } satisfies LinesFile));
    manifest.files[LINES_FILE] = sha256(linesBytes);
    const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 2) + "\n");
    options.onProgress?.("publish", 0, 1);
    const tmpId = await writeSnapshotFiles(
      options.dataDir,
      id,
      { [MANIFEST_FILE]: manifestBytes, [ROUTES_FILE]: routesBytes, [LINES_FILE]: linesBytes, ...(searchIndexReused ? {} : { [SEARCH_INDEX_FILE]: index }) },
      searchIndexReused ? { [SEARCH_INDEX_FILE]: previousIndex } : {},
    );
    // Packs kept from the published snapshot were verified against their names when their build wrote them: the
    // check here is their size; the new pack is read back and hashed. (A server hashes every pack it loads.)
    await verifyAndPublish(options.dataDir, tmpId, id, new Set([...known.values()].map((k) => k.pack)));
    options.onProgress?.("prune", 0, 1);
    await pruneSnapshots(options.dataDir, options.keep ?? DEFAULT_KEEP);
    return {
      ...base,
      id,
      changed: true,
      resources: manifest.counts.resources,
      blobs: routes.blobs.length,
      blobsWritten: written.blobs,
      filesWritten: written.files + (searchIndexReused ? 3 : 4),
      bytesWritten: written.bytes + manifestBytes.length + routesBytes.length + linesBytes.length + (searchIndexReused ? 0 : index.length),
      searchIndexReused,
      productsReused: plan.reused,
      durationMs: now() - started,
    };
  } finally {
    await release();
  }
}

/**
 * `product-lines.json`: every valid product line's digest with the blob its product rendered to, under which
 * catalog rules and render key. The next build skips the schema check of those lines and the render of those
 * products (when the rules, and the key, are still the same).
 */
export const LINES_FILE = "product-lines.json";
interface LinesFile {
  rules: number;
  render: string | null;
  products: Record<string, string>;
}

/** The previous build's product lines, if it left a readable file whose digest its manifest records. */
async function previousLines(dataDir: string, previous: Previous | null): Promise<{ rules: number; render: string | null; products: Map<string, string> } | null> {
  const expected = previous?.manifest.files[LINES_FILE];
  if (!previous || !expected) return null;
  try {
    const bytes = await readFile(join(snapshotDir(dataDir, previous.id), LINES_FILE));
    if (sha256(bytes) !== expected) return null;
    const file = JSON.parse(bytes.toString("utf8")) as LinesFile;
    return { rules: file.rules, render: file.render, products: new Map(Object.entries(file.products)) };
  } catch {
    return null; // unreadable: everything is checked and rendered
  }
}

interface Previous {
  id: string;
  manifest: Manifest;
}

/** The published snapshot's manifest, if it has a readable one; a corrupt one is ignored (the build replaces it). */
async function loadPrevious(dataDir: string): Promise<Previous | null> {
  const id = await currentSnapshotId(dataDir);
  if (id === null) return null;
  try {
    return { id, manifest: await loadManifest(dataDir, id) };
  } catch (err) {
    if (err instanceof SnapshotError || err instanceof SyntaxError) return null;
    throw err;
  }
}

/** The blobs the previous snapshot holds (from its routes) and where, so that only new ones are written. */
async function previousBlobs(dataDir: string, previous: Previous | null): Promise<KnownBlobs> {
  const blobs = new Map<string, KnownBlob>();
  if (!previous) return blobs;
  try {
    const routes = JSON.parse(await readFile(join(snapshotDir(dataDir, previous.id), ROUTES_FILE), "utf8")) as Pick<Routes, "blobs" | "packs">;
    for (const entry of routes.blobs) {
      const [pack, packSize] = routes.packs[entry[5]] ?? [];
      if (pack !== undefined && packSize !== undefined) blobs.set(entry[0], { pack, packSize, entry });
    }
  } catch {
    // Unreadable: every blob is written anew.
  }
  return blobs;
}

/** Most packs one snapshot may span before its blobs are all written into one new pack. */
export const MAX_PACKS = 8;

/**
 * Whether to write every blob anew instead of reusing the previous packs: when reusing would spread the snapshot
 * over more than MAX_PACKS packs, or when less than half of the bytes of the packs it would keep are still used.
 */
function shouldRepack(entries: readonly BlobEntry[], known: KnownBlobs): boolean {
  const packSizes = new Map<string, number>();
  let live = 0;
  for (const [hash] of entries) {
    const k = known.get(hash);
    if (!k) continue;
    packSizes.set(k.pack, k.packSize);
    live += k.entry[1] + k.entry[2] + k.entry[3];
  }
  const total = [...packSizes.values()].reduce((a, b) => a + b, 0);
  return packSizes.size >= MAX_PACKS || live < total / 2;
}

function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
