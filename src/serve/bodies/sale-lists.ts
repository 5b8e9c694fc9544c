// Sale lists composed in memory from their sales' bodies: `{"sales":[a,b,...]}`, its identity joined and its gzip
// assembled from the sales' precompressed pieces (src/compress/assemble.ts), never compressed per request.
import { createHash } from "node:crypto";
import { assembleGzip, joinBodies, registerComposite } from "../../compress/assemble.ts";
import { MIN_COMPRESS_SIZE } from "../../compress/gzip-members.ts";
import { storedPiece } from "../../compress/pieces.ts";
import type { LoadedBlob } from "../../snapshot/load.ts";
import type { Compressor } from "./compressor.ts";

const LIST_OPEN = Buffer.from('{"sales":[');
const LIST_CLOSE = Buffer.from("]}");
const LIST_OPEN_PIECE = storedPiece(LIST_OPEN);

/** 32 hex digits of sha256 over `parts`: a composed body's hash from the hashes of its parts. */
function shortHash(parts: readonly string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex").slice(0, 32);
}

/**
 * A sale list `{"sales":[a,b,...]}` from its sale blobs: identity joined and gzip assembled at once, brotli from
 * the compressor when a slot is free (until then the list goes out gzipped).
 */
export function composeList(parts: readonly LoadedBlob[], compressor: Compressor): LoadedBlob {
  const { identity, links } = joinBodies(LIST_OPEN, parts, LIST_CLOSE);
  // The fields in the order the snapshot loader creates blobs in: one hidden class for every body the responder sees.
  const blob: LoadedBlob = {
    hash: shortHash(parts.map((p) => p.hash)),
    identity,
    gzip: null,
    br: null,
    links,
    gzipPieces: [],
    etags: null,
  };
  registerComposite(blob, LIST_OPEN_PIECE, parts, LIST_CLOSE);
  if (identity.length >= MIN_COMPRESS_SIZE) blob.gzip = assembleGzip(blob);
  compressor.brotliLater(blob);
  return blob;
}
