// Resource bodies read from their packs on first use and kept in a cache bounded by bytes: a server's memory no
// longer grows with the catalog (1,000,000 sample products are 4.5 GB of packs), and the packs' pages sit in the
// system's page cache, which every worker of a cluster shares.
import { readSync } from "node:fs";
import { DEFAULT_BODY_CACHE_BYTES } from "../config/defaults.ts";
import type { LoadedBlob } from "./load.ts";
import type { PackFile } from "./packs.ts";

/** Where a blob's bytes are (identity, gzip and brotli back to back in a pack), and its bytes while cached. */
export interface BlobRef {
  readonly hash: string;
  readonly size: number;
  readonly gzSize: number;
  readonly brSize: number;
  readonly links: number[];
  readonly gzipPieces: number[];
  readonly pack: PackFile;
  readonly offset: number;
  /** Its bytes while the cache holds them. */
  loaded: LoadedBlob | null;
  /** Set by each use, cleared by the cache's sweep: a body not used since the last sweep is the one let go (CLOCK). */
  used: boolean;
}

/** A body the cache holds, counted with what its objects cost beside its bytes. */
const ENTRY_OVERHEAD = 256;

/** A blob's bytes in its pack: identity, gzip and brotli back to back. */
const packedLength = (ref: BlobRef) => ref.size + ref.gzSize + ref.brSize;

export class BodyCache {
  readonly maxBytes: number;
  /** The refs whose bytes are held, in no order; `hand` is where the sweep goes on from. */
  private readonly held: BlobRef[] = [];
  private hand = 0;
  private total = 0;
  /** Bodies read from their packs so far (each a miss of the cache). */
  reads = 0;

  /** `maxBytes`: bytes of bodies held at most. Default DEFAULT_BODY_CACHE_BYTES (1 GB). */
  constructor(maxBytes = DEFAULT_BODY_CACHE_BYTES) {
    this.maxBytes = maxBytes;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.held.length;
  }

  /** The body of `ref`: from memory when held (a field read), else read from its pack (one pread) and held. */
  get(ref: BlobRef): LoadedBlob {
    const loaded = ref.loaded;
    if (loaded !== null) {
      ref.used = true;
      return loaded;
    }
    return this.read(ref);
  }

  private read(ref: BlobRef): LoadedBlob {
    const length = packedLength(ref);
    const bytes = Buffer.allocUnsafeSlow(length);
    const { pack } = ref;
    if (pack.fd < 0) throw new Error(`${pack.path}: read after the pack was closed (blob ${ref.hash})`);
    let got = 0;
    while (got < length) {
      const n = readSync(pack.fd, bytes, got, length - got, ref.offset + got);
      if (n === 0) throw new Error(`${pack.path}: ends before blob ${ref.hash} (truncated since it was checked)`);
      got += n;
    }
    const at = (from: number, n: number) => (n ? bytes.subarray(from, from + n) : null);
    const blob: LoadedBlob = {
      hash: ref.hash,
      identity: bytes.subarray(0, ref.size),
      gzip: at(ref.size, ref.gzSize),
      br: at(ref.size + ref.gzSize, ref.brSize),
      links: ref.links,
      gzipPieces: ref.gzipPieces,
      etags: null,
    };
    this.reads++;
    ref.loaded = blob;
    ref.used = false;
    this.held.push(ref);
    this.total += length + ENTRY_OVERHEAD;
    this.evict(ref);
    return blob;
  }

  /** Lets bodies go until the cache is within its bound, never `keep` (the body being sent). */
  private evict(keep: BlobRef): void {
    const held = this.held;
    while (this.total > this.maxBytes && held.length > 1) {
      if (this.hand >= held.length) this.hand = 0;
      const ref = held[this.hand]!;
      if (ref.used || ref === keep) {
        ref.used = false;
        this.hand++;
        continue;
      }
      ref.loaded = null;
      this.total -= packedLength(ref) + ENTRY_OVERHEAD;
      held[this.hand] = held[held.length - 1]!;
      held.pop();
    }
  }
}
