// The search index file: a versioned, checksummed binary layout, and loading it into a queryable index.
import { crc32 } from "node:zlib";
import { ByteReader, ByteWriter } from "./bytes.ts";
import { createSearchEngine } from "./engine.ts";
import { SearchIndexError } from "./index-error.ts";
import type { DictionaryData } from "./dictionary.ts";
import type { Bm25Params, PostingTable, SearchIndex, SearchIndexData, TextPostingTable } from "./index-data.ts";

export { SearchIndexError } from "./index-error.ts";
export type { PostingTable, SearchIndex, SearchIndexData, TextPostingTable, WindowTable } from "./index-data.ts";

/**
 * Bumped on any incompatible change of the layout below, and whenever the tokenizer or stemmer changes what
 * terms a text becomes (the file stores terms: an old file would silently stop matching). A loader refuses
 * every other version.
 */
export const SEARCH_INDEX_VERSION = 2;

/** The first four bytes of every index file. */
const SEARCH_INDEX_MAGIC = "FSIX";
const HEADER_BYTES = 16;

// Layout, all little-endian:
//   header  "FSIX" | u32 version | u32 payload length | u32 CRC-32 of the payload
//   payload params (5 x f64) | n | ids (varint deltas) | name lengths | description lengths
//           | text table (with tf pairs) | brand table | colour table | gender table | size table | windows
//   table   list count | keys joined by "\n" (empty for windows) (varint length + UTF-8) | per key: doc count
//           | per key: doc deltas (first absolute) [| text only: name tf, description tf per posting]
//   windows store count | store names | group count | per group: from f64, to f64 (Infinity = open), store u8
//           | per group: doc count | per group: doc deltas
//   then    brand-name table | category table | per doc: price + 1 (0 = none) | per doc: discount
//           | dictionary: words joined by "\n" | per word: term | deletion count | hash deltas | word per hash
// (version 2 added everything after the windows)

function writeTable(w: ByteWriter, t: PostingTable, tf?: TextPostingTable): void {
  const n = t.offsets.length - 1;
  w.varint(n);
  w.string(t.keys.join("\n"));
  for (let i = 0; i < n; i++) w.varint(t.offsets[i + 1]! - t.offsets[i]!);
  for (let i = 0; i < n; i++) {
    let prev = 0;
    for (let p = t.offsets[i]!; p < t.offsets[i + 1]!; p++) {
      w.varint(t.docs[p]! - prev);
      prev = t.docs[p]!;
    }
  }
  if (tf) {
    for (let p = 0; p < tf.docs.length; p++) {
      w.varint(tf.nameTf[p]!);
      w.varint(tf.descriptionTf[p]!);
    }
  }
}

function corrupt(what: string): never {
  throw new SearchIndexError(`search index is corrupt: ${what}`);
}

function readCounts(r: ByteReader, n: number, docCount: number, what: string): Uint32Array {
  const offsets = new Uint32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const count = r.varint();
    if (count > docCount) corrupt(`${what} list longer than the doc count`);
    total += count;
    offsets[i + 1] = total;
  }
  return offsets;
}

function readDocs(r: ByteReader, offsets: Uint32Array, docCount: number, what: string): Uint32Array {
  const n = offsets.length - 1;
  const docs = new Uint32Array(offsets[n]!);
  for (let i = 0; i < n; i++) {
    let doc = -1;
    for (let p = offsets[i]!; p < offsets[i + 1]!; p++) {
      const delta = r.varint();
      doc = doc < 0 ? delta : doc + delta;
      if ((delta === 0 && p > offsets[i]!) || doc >= docCount) corrupt(`${what} doc numbers out of order or range`);
      docs[p] = doc;
    }
  }
  return docs;
}

function readTable(r: ByteReader, docCount: number, what: string, keyed = true): PostingTable {
  const n = r.varint();
  const blob = r.string();
  const keys = !keyed || n === 0 ? [] : blob.split("\n");
  if (keyed ? keys.length !== n : blob !== "") corrupt(`${what} key count`);
  const offsets = readCounts(r, n, docCount, what);
  return { keys, offsets, docs: readDocs(r, offsets, docCount, what) };
}

/** Serialises decoded index data into the file's bytes (header included). */
export function encodeSearchIndex(d: SearchIndexData): Uint8Array {
  const w = new ByteWriter();
  const p = d.params;
  for (const v of [p.k1, p.nameWeight, p.nameB, p.descriptionWeight, p.descriptionB]) w.f64(v);
  const n = d.ids.length;
  w.varint(n);
  let prev = 0;
  for (const id of d.ids) {
    w.varint(id - prev);
    prev = id;
  }
  for (const len of d.nameLengths) w.varint(len);
  for (const len of d.descriptionLengths) w.varint(len);
  writeTable(w, d.text, d.text);
  for (const t of [d.brand, d.colors, d.genders, d.sizes]) writeTable(w, t);

  const win = d.windows;
  w.varint(win.storeNames.length);
  for (const s of win.storeNames) w.string(s);
  const groups = win.from.length;
  w.varint(groups);
  for (let g = 0; g < groups; g++) {
    w.f64(win.from[g]!);
    w.f64(win.to[g]!);
    w.varint(win.store[g]!);
  }
  writeTable(w, { keys: [], offsets: win.offsets, docs: win.docs });
  writeTable(w, d.brandNames);
  writeTable(w, d.categories);
  for (const p of d.prices) w.varint(p + 1);
  for (const x of d.discounts) w.varint(x);
  const dict = d.dictionary;
  w.string(dict.words.join("\n"));
  for (const t of dict.terms) w.varint(t);
  w.varint(dict.hashes.length);
  let prevHash = 0;
  for (const h of dict.hashes) {
    w.varint(h - prevHash);
    prevHash = h;
  }
  for (const x of dict.wordIds) w.varint(x);
  const payload = w.finish();

  const out = new Uint8Array(HEADER_BYTES + payload.length);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(SEARCH_INDEX_MAGIC), 0);
  view.setUint32(4, SEARCH_INDEX_VERSION, true);
  view.setUint32(8, payload.length, true);
  view.setUint32(12, crc32(payload), true);
  out.set(payload, HEADER_BYTES);
  return out;
}

/** Checks the header and checksum, then decodes the payload. Throws {@link SearchIndexError}. */
export function decodeSearchIndex(bytes: Uint8Array): SearchIndexData {
  if (bytes.length < HEADER_BYTES || new TextDecoder().decode(bytes.subarray(0, 4)) !== SEARCH_INDEX_MAGIC) {
    throw new SearchIndexError("not a search index file (bad magic number): rebuild the snapshot");
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(4, true);
  if (version !== SEARCH_INDEX_VERSION) {
    throw new SearchIndexError(
      `search index has format version ${version}, this server reads version ${SEARCH_INDEX_VERSION}: rebuild the snapshot`,
    );
  }
  const length = view.getUint32(8, true);
  if (bytes.length !== HEADER_BYTES + length) {
    corrupt(`expected ${HEADER_BYTES + length} bytes, found ${bytes.length} (truncated or padded file)`);
  }
  const payload = bytes.subarray(HEADER_BYTES);
  if (crc32(payload) !== view.getUint32(12, true)) corrupt("checksum mismatch (damaged file)");

  const r = new ByteReader(payload);
  const params: Bm25Params = {
    k1: r.f64(),
    nameWeight: r.f64(),
    nameB: r.f64(),
    descriptionWeight: r.f64(),
    descriptionB: r.f64(),
  };
  const n = r.varint();
  const ids = new Float64Array(n);
  let id = 0;
  for (let i = 0; i < n; i++) {
    const delta = r.varint();
    if (delta === 0 && i > 0) corrupt("product IDs out of order");
    id += delta;
    ids[i] = id;
  }
  const nameLengths = new Uint32Array(n);
  for (let i = 0; i < n; i++) nameLengths[i] = r.varint();
  const descriptionLengths = new Uint32Array(n);
  for (let i = 0; i < n; i++) descriptionLengths[i] = r.varint();

  const base = readTable(r, n, "text");
  const nameTf = new Uint16Array(base.docs.length);
  const descriptionTf = new Uint16Array(base.docs.length);
  for (let p = 0; p < base.docs.length; p++) {
    nameTf[p] = r.varint();
    descriptionTf[p] = r.varint();
  }
  const text: TextPostingTable = { ...base, nameTf, descriptionTf };
  const brand = readTable(r, n, "brand");
  const colors = readTable(r, n, "colour");
  const genders = readTable(r, n, "gender");
  const sizes = readTable(r, n, "size");

  const storeNames: string[] = [];
  for (let s = r.varint(); s > 0; s--) storeNames.push(r.string());
  const groups = r.varint();
  if (groups > payload.length) corrupt("window count");
  const from = new Float64Array(groups);
  const to = new Float64Array(groups);
  const store = new Uint8Array(groups);
  for (let g = 0; g < groups; g++) {
    from[g] = r.f64();
    to[g] = r.f64();
    const s = r.varint();
    if (s >= storeNames.length) corrupt("window store");
    store[g] = s;
  }
  const win = readTable(r, n, "window", false);
  if (win.offsets.length !== groups + 1) corrupt("window table size");
  const brandNames = readTable(r, n, "brand name");
  const categories = readTable(r, n, "category");
  const prices = new Float64Array(n);
  for (let i = 0; i < n; i++) prices[i] = r.varint() - 1;
  const discounts = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    const x = r.varint();
    if (x > 10_000) corrupt("discount above 100%");
    discounts[i] = x;
  }
  const dictionary = readDictionary(r, text.keys.length);
  if (r.pos !== r.end) corrupt("trailing bytes after the last section");
  return {
    params,
    ids,
    nameLengths,
    descriptionLengths,
    text,
    brand,
    colors,
    genders,
    sizes,
    windows: { storeNames, from, to, store, offsets: win.offsets, docs: win.docs },
    brandNames,
    categories,
    prices,
    discounts,
    dictionary,
  };
}

function readDictionary(r: ByteReader, termCount: number): DictionaryData {
  const blob = r.string();
  const words = blob === "" ? [] : blob.split("\n");
  const terms = new Uint32Array(words.length);
  for (let i = 0; i < words.length; i++) {
    const t = r.varint();
    if (t >= termCount) corrupt("dictionary term out of range");
    terms[i] = t;
  }
  const count = r.varint();
  if (count > r.end - r.pos) corrupt("dictionary size");
  const hashes = new Uint32Array(count);
  let h = 0;
  for (let i = 0; i < count; i++) {
    h += r.varint();
    if (h > 0xffffffff) corrupt("dictionary hashes out of order");
    hashes[i] = h;
  }
  const wordIds = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    const x = r.varint();
    if (x >= words.length) corrupt("dictionary word out of range");
    wordIds[i] = x;
  }
  return { words, terms, hashes, wordIds };
}

/**
 * Loads an index file's bytes into a queryable index. Call once at start-up; a wrong file, another format
 * version or damaged bytes throw a {@link SearchIndexError} saying which.
 */
export function loadSearchIndex(bytes: Uint8Array): SearchIndex {
  return createSearchEngine(decodeSearchIndex(bytes));
}
