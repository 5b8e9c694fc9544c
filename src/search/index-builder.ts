// Builds the search index file from the catalog's products: tokenizes (doc-texts.ts), inverts, groups sale windows.
import { BM25 } from "./constants.ts";
import { buildDictionary } from "./dictionary.ts";
import { DocTexts } from "./doc-texts.ts";
import type { PostingTable, SearchIndexData, TextPostingTable, WindowTable } from "./index-format.ts";
import { encodeSearchIndex } from "./index-format.ts";
import { tokenize } from "./tokenize.ts";
import type { SearchDoc } from "./types.ts";

/** Keys to lists of doc numbers, appended in ascending doc order. */
class Lists {
  readonly #lists = new Map<string, number[]>();
  add(key: string, doc: number): void {
    const list = this.#lists.get(key);
    if (list === undefined) this.#lists.set(key, [doc]);
    else if (list[list.length - 1] !== doc) list.push(doc);
  }
  /** Keys sorted, so that the file does not depend on input order. */
  table(): PostingTable {
    const keys = [...this.#lists.keys()].sort();
    const offsets = new Uint32Array(keys.length + 1);
    let total = 0;
    keys.forEach((k, i) => {
      total += this.#lists.get(k)!.length;
      offsets[i + 1] = total;
    });
    const docs = new Uint32Array(total);
    keys.forEach((k, i) => docs.set(this.#lists.get(k)!, offsets[i]));
    return { keys, offsets, docs };
  }
}

function checkDoc(doc: SearchDoc, previousId: number): void {
  if (!Number.isSafeInteger(doc.id) || doc.id <= 0)
    throw new RangeError(`search doc id must be a positive integer below 2^53: ${doc.id}`);
  if (doc.id === previousId) throw new RangeError(`duplicate search doc id ${doc.id}`);
  if (doc.price !== undefined && !(Number.isSafeInteger(doc.price) && doc.price >= 0))
    throw new RangeError(`search doc ${doc.id} has a price that is not a whole number of cents: ${doc.price}`);
  if (doc.discount !== undefined && !(Number.isInteger(doc.discount) && doc.discount >= 0 && doc.discount <= 10_000))
    throw new RangeError(`search doc ${doc.id} has a discount outside 0..10000 basis points: ${doc.discount}`);
  for (const w of doc.windows) {
    if (!Number.isFinite(w.from) || (w.to !== null && !Number.isFinite(w.to))) {
      throw new RangeError(`search doc ${doc.id} has a window with a non-finite time`);
    }
  }
}

/**
 * Inverts the docs' texts (entry `entries[d]` of `texts` for doc d, docs sorted by ID) into per-term postings with
 * per-field term frequencies; fills in the field lengths. Only terms some doc has are kept, sorted, so that the
 * file depends neither on input order nor on what else `texts` holds.
 */
function invertText(
  texts: DocTexts,
  entries: Uint32Array,
  nameLengths: Uint32Array,
  descriptionLengths: Uint32Array,
): { table: TextPostingTable; rank: Int32Array } {
  const data = texts.data;
  const { terms } = texts;
  const counts = new Uint32Array(terms.length);
  let total = 0;
  entries.forEach((at, d) => {
    nameLengths[d] = data[at]!;
    descriptionLengths[d] = data[at + 1]!;
    const n = data[at + 2]!;
    for (let p = at + 3; p < at + 3 + 2 * n; p += 2) counts[data[p]!]!++;
    total += n;
  });
  // Terms in sorted order, so that the file does not depend on the order terms were first seen.
  const order: number[] = [];
  counts.forEach((c, t) => c > 0 && order.push(t));
  order.sort((a, b) => (terms[a]! < terms[b]! ? -1 : 1));
  const rank = new Int32Array(terms.length).fill(-1);
  order.forEach((t, r) => (rank[t] = r));
  const offsets = new Uint32Array(order.length + 1);
  order.forEach((t, r) => (offsets[r + 1] = offsets[r]! + counts[t]!));
  const fill = offsets.slice(0, order.length);
  const postingDocs = new Uint32Array(total);
  const nameTf = new Uint16Array(total);
  const descriptionTf = new Uint16Array(total);
  // Docs in ascending order, each term once per doc: every posting list comes out sorted by doc.
  entries.forEach((at, d) => {
    const n = data[at + 2]!;
    for (let p = at + 3; p < at + 3 + 2 * n; p += 2) {
      const i = fill[rank[data[p]!]!]!++;
      const tf = data[p + 1]!;
      postingDocs[i] = d;
      nameTf[i] = tf >>> 16;
      descriptionTf[i] = tf & 0xffff;
    }
  });
  return { table: { keys: order.map((t) => terms[t]!), offsets, docs: postingDocs, nameTf, descriptionTf }, rank };
}

function groupWindows(docs: readonly SearchDoc[]): WindowTable {
  const byKey = new Map<string, { from: number; to: number; store: string; docs: number[] }>();
  docs.forEach((doc, d) => {
    for (const w of doc.windows) {
      const to = w.to ?? Infinity;
      if (to <= w.from) continue;
      const key = `${w.from}|${to}|${w.store}`;
      const group = byKey.get(key);
      if (group === undefined) byKey.set(key, { from: w.from, to, store: w.store, docs: [d] });
      else if (group.docs[group.docs.length - 1] !== d) group.docs.push(d);
    }
  });
  const groups = [...byKey.values()].sort(
    (a, b) => a.from - b.from || a.to - b.to || (a.store < b.store ? -1 : a.store > b.store ? 1 : 0),
  );
  const storeNames = [...new Set(groups.map((g) => g.store))].sort();
  const offsets = new Uint32Array(groups.length + 1);
  groups.forEach((g, i) => (offsets[i + 1] = offsets[i]! + g.docs.length));
  const windowDocs = new Uint32Array(offsets[groups.length]!);
  groups.forEach((g, i) => windowDocs.set(g.docs, offsets[i]));
  return {
    storeNames,
    from: Float64Array.from(groups, (g) => g.from),
    to: Float64Array.from(groups, (g) => g.to),
    store: Uint8Array.from(groups, (g) => storeNames.indexOf(g.store)),
    offsets,
    docs: windowDocs,
  };
}

/**
 * Builds the decoded form of the index (what {@link buildSearchIndex} serialises). `texts` may hold the analysed
 * text of some docs already (see DocTexts); it gains the rest.
 */
export function buildSearchIndexData(input: Iterable<SearchDoc>, texts = new DocTexts()): SearchIndexData {
  const docs = [...input].sort((a, b) => a.id - b.id);
  docs.forEach((doc, d) => checkDoc(doc, docs[d - 1]?.id ?? 0));
  const n = docs.length;
  const nameLengths = new Uint32Array(n);
  const descriptionLengths = new Uint32Array(n);
  const entries = Uint32Array.from(docs, (doc) => texts.of(doc.name, doc.description));
  const { table: text, rank } = invertText(texts, entries, nameLengths, descriptionLengths);
  const brand = new Lists();
  const brandNames = new Lists();
  const categories = new Lists();
  const colors = new Lists();
  const genders = new Lists();
  const sizes = new Lists();
  // Brands repeat over many products: each is tokenized once.
  const brandTerms = new Map<string, string[]>();
  docs.forEach((doc, d) => {
    let terms = brandTerms.get(doc.brand);
    if (terms === undefined) brandTerms.set(doc.brand, (terms = tokenize(doc.brand)));
    for (const t of terms) brand.add(t, d);
    // Table keys are stored joined by newlines: a value's own newlines become spaces.
    brandNames.add(doc.brand.replace(/\n/g, " "), d);
    for (const c of doc.categories ?? []) categories.add(c.replace(/\n/g, " "), d);
    for (const c of doc.colorGroups) colors.add(c, d);
    for (const s of doc.sizeKeys) sizes.add(s, d);
    if (doc.gender !== undefined) genders.add(doc.gender, d);
  });
  return {
    params: { ...BM25 },
    ids: Float64Array.from(docs, (doc) => doc.id),
    nameLengths,
    descriptionLengths,
    text,
    brand: brand.table(),
    colors: colors.table(),
    genders: genders.table(),
    sizes: sizes.table(),
    windows: groupWindows(docs),
    brandNames: brandNames.table(),
    categories: categories.table(),
    prices: Float64Array.from(docs, (doc) => doc.price ?? -1),
    discounts: Uint16Array.from(docs, (doc) => doc.discount ?? 0),
    dictionary: dictionaryOf(texts, entries, rank),
  };
}

/** The typo and prefix dictionary of the docs' words (name and description); `rank` maps term ids to text keys. */
function dictionaryOf(texts: DocTexts, entries: Uint32Array, rank: Int32Array) {
  const data = texts.data;
  const seen = new Uint8Array(texts.surfaces.length);
  const surfaces = new Map<string, number>();
  for (const at of entries) {
    const s0 = at + 3 + 2 * data[at + 2]!;
    for (let p = s0 + 1; p <= s0 + data[s0]!; p++) {
      const s = data[p]!;
      if (seen[s]) continue;
      seen[s] = 1;
      surfaces.set(texts.surfaces[s]!, rank[texts.surfaceTerms[s]!]!);
    }
  }
  return buildDictionary(surfaces);
}

/**
 * Builds the search index file's bytes from every product that may ever be on sale (order does not matter;
 * IDs must be unique). Holds all docs in memory while it works: at 100,000 products, about 0.5 GB at peak.
 */
export function buildSearchIndex(docs: Iterable<SearchDoc>, texts?: DocTexts): Uint8Array {
  return encodeSearchIndex(buildSearchIndexData(docs, texts));
}
