// Search responses: the engine's ranked IDs turned into a page assembled from the pre-rendered product bytes; for
// clients that accept gzip, a gzip stream assembled from the products' precompressed pieces instead.
import type { LoadedBlob, LoadedSnapshot } from "../snapshot/load.ts";
import { assembleGzip, joinBodies, registerComposite } from "./bodies.ts";
import type { Found } from "./bodies.ts";
import { literal } from "./gzip-splice.ts";
import { fmix, fnv1a, hex8, rotl } from "./fast-hash.ts";
import { scratch } from "./scratch.ts";
import type { SearchParams } from "./search-params.ts";

const OPEN = Buffer.from('{"products":[');
const OPEN_PIECE = literal(OPEN);
/** Search pages at least this large are gzipped for clients that accept gzip. */
export const GZIP_FROM = 1024;

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
    registerComposite(this, OPEN_PIECE, products, tail);
  }

  get identity(): Buffer {
    return (this.#joined ??= joinBodies(OPEN, this.#products, this.#tail, scratch)).identity;
  }

  get links(): number[] {
    return (this.#joined ??= joinBodies(OPEN, this.#products, this.#tail, scratch)).links;
  }
}

/** The search result for the request's parameters at `now`. */
export function searchBody(snapshot: LoadedSnapshot, params: SearchParams, now: number): Found {
  const result = snapshot.search.search({ ...params, now });
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
    const product = snapshot.products.get(id);
    if (!product) throw new Error(`search index names product ${id}, which the snapshot does not hold`);
    products[i] = product;
    size += product.identity.length + (i > 0 ? 1 : 0);
    const key = etagKeyOf(product);
    h1 = (Math.imul(rotl(h1 ^ key.k1, 13), 0xcc9e2d51) + i) | 0;
    h2 = Math.imul(rotl(h2 ^ key.k2, 17), 0x1b873593) ^ h1;
  }
  const tail = Buffer.from(`],"total_found":${result.total}${facets}}`);
  size += tail.length;
  const hash = `${hex8(fmix(h1 ^ h2))}${hex8(fmix((h2 + h1) | 0))}`;
  const body = new PageBlob(hash, products, tail, size);
  // The page gzipped from the products' pieces (a fraction of the cost of compressing it), when it is sent so.
  return {
    body,
    changesAt: result.nextChange,
    gzip: size >= GZIP_FROM ? () => assembleGzip(body, null, null, scratch) : null,
    perRequest: true,
  };
}

/** The first 64 bits of a product's content hash, for page ETags, worked out once per product. */
interface EtagKey {
  k1: number;
  k2: number;
}
const etagKeys = new WeakMap<LoadedBlob, EtagKey>();

function etagKeyOf(body: LoadedBlob): EtagKey {
  let key = etagKeys.get(body);
  if (!key)
    etagKeys.set(
      body,
      (key = { k1: parseInt(body.hash.slice(0, 8), 16) | 0, k2: parseInt(body.hash.slice(8, 16), 16) | 0 }),
    );
  return key;
}
