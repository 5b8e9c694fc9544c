// Search responses: the engine's ranked IDs turned into a page assembled from the pre-rendered product bytes; for
// clients that accept gzip, a gzip stream assembled from the products' precompressed pieces instead.
import type { BlobRef } from "../../snapshot/body-cache.ts";
import type { LoadedBlob, LoadedSnapshot } from "../../snapshot/load.ts";
import { joinBodies, registerComposite } from "../../compress/assemble.ts";
import { elementOf, GzipJoin, storedPiece } from "../../compress/pieces.ts";
import type { Element } from "../../compress/pieces.ts";
import type { Found } from "../bodies/response-body.ts";
import { fmix, fnv1a, hex8, rotl } from "../bodies/fast-hash.ts";
import { allocScratch } from "../bodies/scratch.ts";
import type { SearchParams } from "../admission/search-params.ts";
import { performance } from "node:perf_hooks";
import { foundSender } from "../bodies/respond.ts";
import type { ResponderModule } from "../responder.ts";

const OPEN = Buffer.from('{"products":[');
const OPEN_PIECE = storedPiece(OPEN);
/** Search pages at least this large are gzipped for clients that accept gzip. */
const GZIP_FROM = 1024;

/**
 * A search page as a body: its ETag is known at once, its bytes (with the page-link offsets `affid` needs) are
 * joined only if they are sent uncompressed, so a 304 or a gzip response never copies the products. A page is made
 * for one response: its bytes are in scratch buffers (scratch.ts), given back once the response is written.
 */
class PageBlob implements LoadedBlob {
  readonly hash: string;
  readonly gzip = null;
  readonly br = null;
  readonly gzipPieces: number[] = [];
  etags: [string, string, string] | null = null;
  /** The identity bytes' length, known before they are joined. */
  readonly size: number;
  readonly #products: readonly LoadedBlob[];
  readonly #tail: Buffer;
  #joined: { identity: Buffer; links: number[] } | null = null;

  constructor(hash: string, products: readonly LoadedBlob[], tail: Buffer, size: number) {
    this.hash = hash;
    this.size = size;
    this.#products = products;
    this.#tail = tail;
    // What a variant (`affid`, JSONP) of the page assembles its gzip from.
    registerComposite(this, OPEN_PIECE, products, tail);
  }

  /** The page gzipped, joined from the products' deflate data whole (no insert at their links), in a scratch buffer. */
  gzipped(): Buffer {
    const gzip = new GzipJoin();
    gzip.add(OPEN_PIECE);
    gzip.addElements(this.#products.map(elementOfBlob));
    gzip.add(storedPiece(this.#tail));
    return gzip.finish(allocScratch);
  }

  get identity(): Buffer {
    return (this.#joined ??= joinBodies(OPEN, this.#products, this.#tail, allocScratch)).identity;
  }

  get links(): number[] {
    return (this.#joined ??= joinBodies(OPEN, this.#products, this.#tail, allocScratch)).links;
  }
}

/** The search result for the request's parameters at `now`. */
export function searchBody(snapshot: LoadedSnapshot, params: SearchParams, now: number): Found {
  const result = snapshot.search.search({ ...params, now });
  const table = entriesOf(snapshot);
  const { bodies } = snapshot;
  const docs = result.docs;
  const products = new Array<LoadedBlob>(result.ids.length);
  let size = OPEN.length;
  // The ETag: a 64-bit order-sensitive mix of the products' content hashes (each changes with its bytes) and
  // total_found. It only has to tell apart the versions of one URL's page; sha1 over the hashes cost 5% of a search.
  // Facets (only when asked for) follow total_found; their bytes are in the ETag too.
  const facets = result.facets ? `,"facets":${JSON.stringify(result.facets)}` : "";
  let h1 = 0x9e3779b9 ^ result.total ^ (facets === "" ? 0 : fnv1a(facets));
  let h2 = 0x85ebca6b ^ result.ids.length;
  for (let i = 0; i < result.ids.length; i++) {
    const id = result.ids[i]!;
    const doc = docs?.[i];
    const at = doc === undefined ? 0 : table.byDoc[doc]!;
    const entry = at > 0 ? table.list[at - 1]! : entryOf(snapshot, table, id, doc);
    products[i] = bodies.get(entry.ref);
    size += entry.size + (i > 0 ? 1 : 0);
    h1 = (Math.imul(rotl(h1 ^ entry.k1, 13), 0xcc9e2d51) + i) | 0;
    h2 = Math.imul(rotl(h2 ^ entry.k2, 17), 0x1b873593) ^ h1;
  }
  const tail = Buffer.from(`],"total_found":${result.total}${facets}}`);
  size += tail.length;
  const hash = `${hex8(fmix(h1 ^ h2))}${hex8(fmix((h2 + h1) | 0))}`;
  const body = new PageBlob(hash, products, tail, size);
  // The page gzipped from the products' deflate data (a fraction of the cost of compressing it), when it is sent so.
  return {
    body,
    changesAt: result.nextChange,
    gzip: size >= GZIP_FROM ? () => body.gzipped() : null,
    perRequest: true,
  };
}

/**
 * What a page needs of a product, looked up once per product of a snapshot: where its body is, its size and the
 * first 64 bits of its content hash (for page ETags). As many as the snapshot's products at most, and forgotten with
 * the snapshot; the bodies themselves are the body cache's (snapshot.bodies), so they count towards its bound.
 */
interface PageEntry {
  ref: BlobRef;
  size: number;
  k1: number;
  k2: number;
}
/** A snapshot's page entries, by the index's doc numbers when a result gives them (two array loads), else by ID. */
interface EntryTable {
  list: PageEntry[];
  /** 1 + the entry's place in `list`, by doc number; 0 for none yet. */
  byDoc: Uint32Array;
  byId: Map<number, PageEntry>;
}
const entryTables = new WeakMap<LoadedSnapshot, EntryTable>();

function entriesOf(snapshot: LoadedSnapshot): EntryTable {
  let table = entryTables.get(snapshot);
  if (!table)
    entryTables.set(
      snapshot,
      (table = { list: [], byDoc: new Uint32Array(snapshot.search.size), byId: new Map<number, PageEntry>() }),
    );
  return table;
}

/** The entry of product `id` (doc number `doc` in the index, when known), made on first use. */
function entryOf(snapshot: LoadedSnapshot, table: EntryTable, id: number, doc: number | undefined): PageEntry {
  let entry = table.byId.get(id);
  if (!entry) entry = newEntry(snapshot, table, id);
  if (doc !== undefined && doc < table.byDoc.length && table.byDoc[doc] === 0) {
    table.list.push(entry);
    table.byDoc[doc] = table.list.length;
  }
  return entry;
}

function newEntry(snapshot: LoadedSnapshot, table: EntryTable, id: number): PageEntry {
  const ref = snapshot.products.get(id);
  if (!ref) throw new Error(`search index names product ${id}, which the snapshot does not hold`);
  const entry: PageEntry = {
    ref,
    size: ref.size,
    k1: parseInt(ref.hash.slice(0, 8), 16) | 0,
    k2: parseInt(ref.hash.slice(8, 16), 16) | 0,
  };
  table.byId.set(id, entry);
  return entry;
}

/** A product's deflate data whole, for gzipped pages: made once per body, and let go with it. */
const elements = new WeakMap<LoadedBlob, Element>();
function elementOfBlob(blob: LoadedBlob): Element {
  let element = elements.get(blob);
  if (!element) elements.set(blob, (element = elementOf(blob)));
  return element;
}

/** The search's responder: a page of results from the index in memory, timed for the metrics when they are on. */
export const responder: ResponderModule["responder"] = (services) => {
  const send = foundSender(services);
  const { metrics } = services;
  return (req, res, s, a, info, headers, nowMs) => {
    const now = Math.floor(nowMs / 1000);
    if (!metrics) return send(req, res, searchBody(s.snapshot!, a!.search!, now), a!, info, headers, nowMs);
    const started = performance.now();
    const found = searchBody(s.snapshot!, a!.search!, now);
    metrics.search((performance.now() - started) / 1000);
    return send(req, res, found, a!, info, headers, nowMs);
  };
};
