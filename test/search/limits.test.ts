// The bounds on a search's work (src/search/limits.ts): checked after folding, and holding whoever calls the engine.
import { describe, expect, it } from "vitest";
import { buildSearchIndex } from "../../src/search/index-builder.ts";
import { loadSearchIndex } from "../../src/search/index-format.ts";
import {
  MAX_EXPANSIONS,
  MAX_FUZZY_WORD_LENGTH,
  MAX_PREFIX_SCAN,
  MAX_QUERY_TEXT_LENGTH,
  MAX_QUERY_WORDS,
  queryTextProblem,
} from "../../src/search/limits.ts";
import { searchQuery } from "../../src/search/types.ts";
import type { SearchDoc } from "../../src/search/types.ts";
import { queryWords } from "../../src/search/words.ts";

const NOW = 1_000;
const doc = (id: number, name: string): SearchDoc => ({
  id,
  name,
  description: "",
  brand: "Acme",
  colorGroups: [],
  sizeKeys: [],
  windows: [{ from: 0, to: null, store: "women" }],
});
const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${i + from}`).join(" ");

describe("queryTextProblem", () => {
  const tooLong = /at most 256 characters, as sent and once/;
  it.each<[string, string, RegExp | null]>([
    ["empty", "", /must not be empty/],
    ["256 letters", "a".repeat(256), null],
    ["257 letters", "a".repeat(257), tooLong],
    ["U+3316 x 42: 252 letters once folded", "\u3316".repeat(42), null],
    ["U+3316 x 43: 258 letters once folded", "\u3316".repeat(43), tooLong],
    ["U+3316 x 256, the issue's request", "\u3316".repeat(256), tooLong],
    ["U+FDFA x 14: 252 once folded", "\ufdfa".repeat(14), null],
    ["U+FDFA x 15: 270 once folded", "\ufdfa".repeat(15), tooLong],
    ["ligature ffi x 86: 258 once folded", "\ufb03".repeat(86), tooLong],
    ["Hangul x 86: 258 jamo once folded", "\ud55c".repeat(86), tooLong],
    ["a letter and 255 combining marks: 1 once folded", "e" + "\u0301".repeat(255), null],
    ["32 distinct words", words(32), null],
    ["33 distinct words", words(33), /at most 32 distinct words/],
    ["33 words, one of them twice", `${words(32)} w0`, null],
    ["33 words, one a stop word", `${words(32)} the`, null],
    ["33 words, two spellings of one term", `${words(31)} boots boot`, null],
  ])("%s", (_, text, problem) => {
    const found = queryTextProblem(text, true);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toMatch(problem);
  });

  it("does not count words when asked not to (a brand value)", () => {
    expect(queryTextProblem(words(40), false)).toBeNull();
    expect(MAX_QUERY_TEXT_LENGTH).toBe(256);
  });
});

describe("queryWords", () => {
  it.each<[string, number, number]>([
    [`a word of ${MAX_FUZZY_WORD_LENGTH} letters: two typos`, MAX_FUZZY_WORD_LENGTH, 2],
    [`a word of ${MAX_FUZZY_WORD_LENGTH + 1} letters: exact only`, MAX_FUZZY_WORD_LENGTH + 1, 0],
    ["a word of 1,536 letters (the issue's, folded): exact only", 1536, 0],
  ])("%s", (_, length, typos) => {
    const [w] = queryWords("k".repeat(length), true, true);
    expect(w!.typos).toBe(typos);
    expect(w!.prefix).toBe(typos > 0);
  });

  it(`keeps at most ${MAX_QUERY_WORDS} words whoever calls it`, () => {
    expect(queryWords(words(100), true, false)).toHaveLength(MAX_QUERY_WORDS);
  });
});

describe("expansions", () => {
  it(`a word expands to at most ${MAX_EXPANSIONS} terms: the exact one, then the most frequent typos`, () => {
    // 48 words one edit from "αβγδε" (its 4th or 5th letter replaced; Greek, so that no stemming merges them); the
    // k-th is in k + 1 docs, "αβγδε" in one.
    const letters = [..."αβγδεζηθικλμνξοπρστυφχψω"];
    const variants = [
      ...letters.filter((c) => c !== "ε").map((c) => `αβγδ${c}`),
      ...letters.filter((c) => c !== "δ").map((c) => `αβγ${c}ε`),
    ];
    expect(variants).toHaveLength(46);
    const docs: SearchDoc[] = [doc(1, "αβγδε")];
    variants.forEach((v, k) => {
      for (let j = 0; j <= k; j++) docs.push(doc(docs.length + 1, v));
    });
    const index = loadSearchIndex(buildSearchIndex(docs));
    expect(index.search(searchQuery("αβγδε", NOW, { typos: false })).total).toBe(1);
    // The exact term and the 31 most frequent variants (k = 45 down to 15): 1 + (16 + ... + 46) docs.
    let expected = 1;
    for (let k = 46 - (MAX_EXPANSIONS - 1); k < 46; k++) expected += k + 1;
    expect(index.search(searchQuery("αβγδε", NOW)).total).toBe(expected);
  });

  it(`a prefix examines at most ${MAX_PREFIX_SCAN} dictionary words, from the prefix on`, () => {
    // MAX_PREFIX_SCAN words that begin with "zqx", then one more after them, in every other doc's name.
    const docs: SearchDoc[] = [];
    const word = (i: number) =>
      `zqx${i
        .toString(26)
        .replace(/[0-9]/g, (d) => "klmnopqrst"[Number(d)]!)
        .padStart(4, "a")}`;
    for (let i = 0; i < MAX_PREFIX_SCAN; i++) docs.push(doc(i + 1, word(i)));
    const last = "zqxzzzzz";
    for (let j = 0; j < 100; j++) docs.push(doc(MAX_PREFIX_SCAN + j + 1, last));
    const index = loadSearchIndex(buildSearchIndex(docs));
    const result = index.search(searchQuery("zqx", NOW, { prefix: true, typos: false, rows: 100 }));
    // The most frequent completion lies past the scan: not among the matches (though a longer prefix finds it).
    expect(result.total).toBeGreaterThan(0);
    expect(result.ids.filter((id) => id > MAX_PREFIX_SCAN)).toEqual([]);
    expect(index.search(searchQuery("zqxzzzz", NOW, { prefix: true, typos: false })).total).toBe(100);
  });
});
