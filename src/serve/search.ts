// Search responses: the engine's ranked IDs turned into a body assembled from the pre-rendered product bytes.
import { createHash } from "node:crypto";
import type { LoadedBlob, LoadedSnapshot } from "../snapshot/load.ts";
import { parseSearchParams } from "./search-params.ts";

const OPEN = Buffer.from('{"products":[');
const COMMA = Buffer.from(",");

/** The search result for the request's parameters at `now`, and when it next changes (epoch seconds, or null). */
export function searchBody(snapshot: LoadedSnapshot, query: Map<string, string[]>, now: number): { body: LoadedBlob; changesAt: number | null } {
  const result = snapshot.search.search(parseSearchParams(query, now));
  const chunks: Buffer[] = [OPEN];
  const links: number[] = [];
  const hash = createHash("sha1");
  let at = OPEN.length;
  result.ids.forEach((id, i) => {
    const product = snapshot.products.get(id);
    if (!product) throw new Error(`search index names product ${id}, which the snapshot does not hold`);
    if (i > 0) {
      chunks.push(COMMA);
      at += 1;
    }
    for (const off of product.links) links.push(at + off);
    chunks.push(product.identity);
    at += product.identity.length;
    hash.update(product.hash);
  });
  const tail = `],"total_found":${result.total}}`;
  chunks.push(Buffer.from(tail));
  hash.update(tail);
  const identity = Buffer.concat(chunks, at + tail.length);
  // No gzip here: the response gzips it only for a client that accepts gzip and is not answered 304.
  return { body: { hash: hash.digest("hex").slice(0, 32), identity, gzip: null, br: null, links, etags: null }, changesAt: result.nextChange };
}
