// Builds the search index file from the catalog's products: tokenizes, inverts, groups sale windows.
import { BM25 } from "./constants.ts";
import { buildDictionary } from "./dictionary.ts";
import type { PostingTable, SearchIndexData, TextPostingTable, WindowTable } from "./index-format.ts";
import { encodeSearchIndex } from "./index-format.ts";
import { surfaceWords, tokenize } from "./tokenize.ts";
import type { SearchDoc } from "./types.ts";

const MAX_TF = 0xffff;

/** A growable Uint32Array. */
class U32List {
  data = new Uint32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

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

function countTerms(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of tokenize(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
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

/** Inverts the text of docs (sorted by ID) into per-term postings with per-field term frequencies. */
function invertText(
  docs: readonly SearchDoc[],
  nameLengths: Uint32Array,
  descriptionLengths: Uint32Array,
): TextPostingTable {
  const termIds = new Map<string, number>();
  const terms: string[] = [];
  // One log of (term, doc, tfs), in doc order; a counting sort by term then yields sorted postings.
  const logTerm = new U32List();
  const logDoc = new U32List();
  const logTf = new U32List();
  docs.forEach((doc, d) => {
    const name = countTerms(doc.name);
    const description = countTerms(doc.description);
    let nameLength = 0;
    let descriptionLength = 0;
    for (const c of name.values()) nameLength += c;
    for (const c of description.values()) descriptionLength += c;
    nameLengths[d] = nameLength;
    descriptionLengths[d] = descriptionLength;
    for (const term of new Set([...name.keys(), ...description.keys()])) {
      let t = termIds.get(term);
      if (t === undefined) {
        t = terms.length;
        termIds.set(term, t);
        terms.push(term);
      }
      logTerm.push(t);
      logDoc.push(d);
      logTf.push((Math.min(name.get(term) ?? 0, MAX_TF) << 16) | Math.min(description.get(term) ?? 0, MAX_TF));
    }
  });

  // Terms in sorted order, so that the file does not depend on the order terms were first seen.
  const order = terms.map((_, i) => i).sort((a, b) => (terms[a]! < terms[b]! ? -1 : 1));
  const rank = new Uint32Array(terms.length);
  order.forEach((t, r) => (rank[t] = r));
  const offsets = new Uint32Array(terms.length + 1);
  for (let i = 0; i < logTerm.length; i++) offsets[rank[logTerm.data[i]!]! + 1]!++;
  for (let r = 0; r < terms.length; r++) offsets[r + 1]! += offsets[r]!;
  const fill = offsets.slice(0, terms.length);
  const postingDocs = new Uint32Array(logTerm.length);
  const nameTf = new Uint16Array(logTerm.length);
  const descriptionTf = new Uint16Array(logTerm.length);
  for (let i = 0; i < logTerm.length; i++) {
    const p = fill[rank[logTerm.data[i]!]!]!++;
    postingDocs[p] = logDoc.data[i]!;
    const tf = logTf.data[i]!;
    nameTf[p] = tf >>> 16;
    descriptionTf[p] = tf & 0xffff;
  }
  return { keys: order.map((t) => terms[t]!), offsets, docs: postingDocs, nameTf, descriptionTf };
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

/** Builds the decoded form of the index (what {@link buildSearchIndex} serialises). */
export function buildSearchIndexData(input: Iterable<SearchDoc>): SearchIndexData {
  const docs = [...input].sort((a, b) => a.id - b.id);
  docs.forEach((doc, d) => checkDoc(doc, docs[d - 1]?.id ?? 0));
  const n = docs.length;
  const nameLengths = new Uint32Array(n);
  const descriptionLengths = new Uint32Array(n);
  const text = invertText(docs, nameLengths, descriptionLengths);
  const brand = new Lists();
  const brandNames = new Lists();
  const categories = new Lists();
  const colors = new Lists();
  const genders = new Lists();
  const sizes = new Lists();
  docs.forEach((doc, d) => {
    for (const t of tokenize(doc.brand)) brand.add(t, d);
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
    dictionary: dictionaryOf(docs, text.keys),
  };
}

/** The typo and prefix dictionary of the docs' words (name and description). */
function dictionaryOf(docs: readonly SearchDoc[], keys: readonly string[]) {
  const termIndex = new Map(keys.map((k, i) => [k, i]));
  const surfaces = new Map<string, number>();
  for (const doc of docs) {
    for (const text of [doc.name, doc.description]) {
      for (const w of surfaceWords(text, false)) {
        if (!surfaces.has(w.surface)) surfaces.set(w.surface, termIndex.get(w.term)!);
      }
    }
  }
  return buildDictionary(surfaces);
}

/**
 * Builds the search index file's bytes from every product that may ever be on sale (order does not matter;
 * IDs must be unique). Holds all docs in memory while it works: at 100,000 products, about 0.5 GB at peak.
 */
export function buildSearchIndex(docs: Iterable<SearchDoc>): Uint8Array {
  return encodeSearchIndex(buildSearchIndexData(docs));
}
