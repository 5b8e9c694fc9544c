// The documents' text as the index builder needs it: each distinct (name, description) tokenized once, kept by a
// digest of the text, so that a build can start from the texts the previous build analysed (src/generate/search-text.ts).
import { hash } from "node:crypto";
import { surfaceWords } from "./tokenize.ts";
import { fuzzable } from "./words.ts";

/** Term frequencies are stored in 16 bits per field. */
const MAX_TF = 0xffff;

/** Bytes of a text's key: the first 128 bits of the sha256 of its name's length, its name and its description. */
export const TEXT_KEY_BYTES = 16;

/** The key of a document's text (latin1, "binary" to node, {@link TEXT_KEY_BYTES} characters). Equal keys: equal name and description. */
function textKey(name: string, description: string): string {
  return hash("sha256", `${name.length}:${name}${description}`, "binary").slice(0, TEXT_KEY_BYTES);
}

/**
 * The parts of {@link DocTexts}, as written to and read from a file: interned terms and surface words (with the
 * term each becomes) and one entry per text, laid out in `data` at the offset `offsets[i]` of `keys[i]`:
 * name length, description length (in terms), term count, then per term its id and its term frequencies
 * (name << 16 | description, each at most {@link MAX_TF}), then the count and ids of its fuzzable surface words.
 */
export interface DocTextParts {
  terms: string[];
  surfaces: string[];
  surfaceTerms: Uint32Array;
  keys: string[];
  offsets: Uint32Array;
  data: Uint32Array;
}

/**
 * Analysed texts by key. {@link of} gives a text's entry, analysing it only if no entry has its key: an entry
 * taken from elsewhere must be what `of` would compute for that text with this code (the build keys its file by
 * the digest of this module and what it imports).
 */
export class DocTexts {
  readonly terms: string[];
  readonly surfaces: string[];
  readonly surfaceTerms: number[];
  readonly #data: Uint32List;
  readonly #termIds = new Map<string, number>();
  readonly #surfaceIds = new Map<string, number>();
  readonly #entries = new Map<string, number>();
  /** The keys asked for with {@link of}, with their offsets, in the order first asked. */
  readonly #used = new Map<string, number>();
  #analysed = 0;

  constructor(parts?: DocTextParts) {
    this.terms = parts ? [...parts.terms] : [];
    this.surfaces = parts ? [...parts.surfaces] : [];
    this.surfaceTerms = parts ? [...parts.surfaceTerms] : [];
    this.#data = new Uint32List(parts?.data);
    this.terms.forEach((t, i) => this.#termIds.set(t, i));
    this.surfaces.forEach((s, i) => this.#surfaceIds.set(s, i));
    parts?.keys.forEach((k, i) => this.#entries.set(k, parts.offsets[i]!));
  }

  /** The entries' data (valid until the next {@link of}). */
  get data(): Uint32Array {
    return this.#data.data;
  }

  /** How many texts {@link of} has analysed (rather than found). */
  get analysed(): number {
    return this.#analysed;
  }

  /** The offset in {@link data} of the entry of this text, analysed now if no entry has its key. */
  of(name: string, description: string): number {
    const key = textKey(name, description);
    let at = this.#entries.get(key);
    if (at === undefined) {
      at = this.#analyse(name, description);
      this.#analysed++;
      this.#entries.set(key, at);
    }
    this.#used.set(key, at);
    return at;
  }

  /** The entries asked for with {@link of}, alone: terms and surfaces no other entry uses are left out. */
  usedParts(): DocTextParts {
    const data = this.#data.data;
    const keys = [...this.#used.keys()];
    const from = Uint32Array.from(this.#used.values());
    // Terms and surfaces numbered anew in order of first use; -1: not used (yet).
    const termIds = new Int32Array(this.terms.length).fill(-1);
    const surfaceIds = new Int32Array(this.surfaces.length).fill(-1);
    const terms: string[] = [];
    const surfaces: string[] = [];
    const surfaceTerms: number[] = [];
    // Sized first, then filled in one pass of plain loops (the entries of 100,000 texts are 7 million numbers).
    let size = 0;
    for (let e = 0; e < from.length; e++) size += entryLength(data, from[e]!);
    const out = new Uint32Array(size);
    const offsets = new Uint32Array(from.length);
    let o = 0;
    for (let e = 0; e < from.length; e++) {
      const at = from[e]!;
      offsets[e] = o;
      const n = data[at + 2]!;
      out[o] = data[at]!;
      out[o + 1] = data[at + 1]!;
      out[o + 2] = n;
      o += 3;
      const s0 = at + 3 + 2 * n;
      for (let p = at + 3; p < s0; p += 2) {
        const t = data[p]!;
        let id = termIds[t]!;
        if (id < 0) id = termIds[t] = terms.push(this.terms[t]!) - 1;
        out[o] = id;
        out[o + 1] = data[p + 1]!;
        o += 2;
      }
      const surfaceCount = data[s0]!;
      out[o++] = surfaceCount;
      for (let p = s0 + 1; p <= s0 + surfaceCount; p++) {
        const s = data[p]!;
        let id = surfaceIds[s]!;
        if (id < 0) {
          id = surfaceIds[s] = surfaces.push(this.surfaces[s]!) - 1;
          // A surface's term is one of the terms of an entry that has the surface: numbered above, in this entry.
          const t = this.surfaceTerms[s]!;
          if (termIds[t]! < 0) termIds[t] = terms.push(this.terms[t]!) - 1;
          surfaceTerms.push(termIds[t]!);
        }
        out[o++] = id;
      }
    }
    return { terms, surfaces, surfaceTerms: Uint32Array.from(surfaceTerms), keys, offsets, data: out };
  }

  #analyse(name: string, description: string): number {
    const tfs = new Map<number, number>();
    const surfaces = new Set<number>();
    const fields = [surfaceWords(name, false), surfaceWords(description, false)] as const;
    fields.forEach((words, field) => {
      for (const { surface, term } of words) {
        let t = this.#termIds.get(term);
        if (t === undefined) this.#termIds.set(term, (t = this.terms.push(term) - 1));
        const [nameTf, descriptionTf] = unpack(tfs.get(t) ?? 0);
        tfs.set(t, field === 0 ? pack(nameTf + 1, descriptionTf) : pack(nameTf, descriptionTf + 1));
        if (!fuzzable(surface)) continue;
        let s = this.#surfaceIds.get(surface);
        if (s === undefined) {
          this.#surfaceIds.set(surface, (s = this.surfaces.push(surface) - 1));
          this.surfaceTerms.push(t);
        }
        surfaces.add(s);
      }
    });
    const data = this.#data;
    const at = data.length;
    data.push(fields[0].length);
    data.push(fields[1].length);
    data.push(tfs.size);
    for (const [t, tf] of tfs) {
      data.push(t);
      data.push(tf);
    }
    data.push(surfaces.size);
    for (const s of surfaces) data.push(s);
    return at;
  }
}

/** The numbers an entry takes in the data. */
const entryLength = (data: Uint32Array, at: number): number => {
  const s0 = at + 3 + 2 * data[at + 2]!;
  return s0 + 1 + data[s0]! - at;
};

/** Name and description counts packed in 32 bits, each capped at MAX_TF (counts past it stay at it). */
const pack = (name: number, description: number): number =>
  ((Math.min(name, MAX_TF) << 16) | Math.min(description, MAX_TF)) >>> 0;
const unpack = (tf: number): [number, number] => [tf >>> 16, tf & 0xffff];

/** A growable Uint32Array: `data` holds `length` values (and room for more). */
class Uint32List {
  data: Uint32Array;
  length: number;
  /**
   * Starts with a copy of `initial` and room for a sixteenth more: an incremental build adds the few texts that
   * changed to the previous build's, and doubling 30 MB for them cost a 60 MB allocation (and the collections it
   * set off, with a gigabyte of catalog on the heap).
   */
  constructor(initial?: Uint32Array) {
    this.data = new Uint32Array(initial ? initial.length + (initial.length >> 4) + 1024 : 1024);
    if (initial) this.data.set(initial);
    this.length = initial?.length ?? 0;
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(Math.max(1024, this.data.length * 2));
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}
