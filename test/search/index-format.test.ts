import { describe, expect, it } from "vitest";
import { buildSearchIndex, buildSearchIndexData } from "../../src/search/index-builder.ts";
import {
  decodeSearchIndex,
  loadSearchIndex,
  SEARCH_INDEX_VERSION,
  SearchIndexError,
} from "../../src/search/index-format.ts";
import type { SearchDoc, SearchQuery } from "../../src/search/types.ts";
import { searchQuery } from "../../src/search/types.ts";

const NOW = 1_800_000_000;
const DOCS: SearchDoc[] = [
  {
    id: 7,
    name: "Black Dress",
    description: "Crepe, fully lined.",
    brand: "Calvin Klein",
    colorGroups: ["black"],
    sizeKeys: ["WoAp:S"],
    gender: "girl",
    windows: [{ from: NOW - 10, to: NOW + 10, store: "kids" }],
  },
  {
    id: 2 ** 53 - 1,
    name: "Largest ID",
    description: "Ünïcödé 日本製 t-shirt",
    brand: "Zed",
    colorGroups: ["red", "red"],
    sizeKeys: ["WoSh:8.5"],
    windows: [
      { from: 0, to: null, store: "women" },
      { from: 0, to: null, store: "women" },
    ],
  },
  { id: 3, name: "Plain", description: "", brand: "A", colorGroups: [], sizeKeys: [], windows: [] },
];
const q = (text: string): SearchQuery => searchQuery(text, NOW);

describe("round trip", () => {
  it("decodes to exactly what was built", () => {
    expect(decodeSearchIndex(buildSearchIndex(DOCS))).toEqual(buildSearchIndexData(DOCS));
  });

  it("does not depend on the order of the docs", () => {
    expect(buildSearchIndex([...DOCS].reverse())).toEqual(buildSearchIndex(DOCS));
  });

  it("answers queries after loading", () => {
    const index = loadSearchIndex(buildSearchIndex(DOCS));
    expect(index.size).toBe(3);
    expect(index.search(q("dress")).ids).toEqual([7]);
    expect(index.search(q("tshirt")).ids).toEqual([2 ** 53 - 1]);
    expect(index.search(q("unicode")).ids).toEqual([2 ** 53 - 1]);
    expect(index.search(q("plain")).ids).toEqual([]);
  });

  it("loads an empty index", () => {
    const index = loadSearchIndex(buildSearchIndex([]));
    expect(index.search(q("dress"))).toEqual({ ids: [], total: 0, nextChange: null });
  });

  it.each<[string, SearchDoc]>([
    ["a zero ID", { ...DOCS[0]!, id: 0 }],
    ["a fractional ID", { ...DOCS[0]!, id: 1.5 }],
    ["an unsafe ID", { ...DOCS[0]!, id: 2 ** 53 }],
    ["a NaN window", { ...DOCS[0]!, windows: [{ from: NaN, to: null, store: "women" }] }],
  ])("refuses to build with %s", (_, bad) => {
    expect(() => buildSearchIndex([bad])).toThrow(RangeError);
  });

  it("refuses duplicate IDs", () => {
    expect(() => buildSearchIndex([DOCS[0]!, DOCS[0]!])).toThrow(/duplicate search doc id 7/);
  });
});

describe("bad files are clear errors", () => {
  const good = buildSearchIndex(DOCS);
  const patched = (f: (b: Uint8Array) => void) => {
    const b = good.slice();
    f(b);
    return b;
  };

  it.each<[string, Uint8Array, RegExp]>([
    ["empty", new Uint8Array(0), /not a search index file/],
    ["JSON instead", new TextEncoder().encode('{"hello":"world"}'), /not a search index file/],
    [
      "another version",
      patched((b) => new DataView(b.buffer).setUint32(4, SEARCH_INDEX_VERSION + 1, true)),
      new RegExp(`version ${SEARCH_INDEX_VERSION + 1}, this server reads version ${SEARCH_INDEX_VERSION}`),
    ],
    ["truncated", good.slice(0, good.length - 1), /truncated/],
    ["padded", new Uint8Array([...good, 0]), /truncated or padded/],
    ["a flipped bit in the payload", patched((b) => (b[b.length - 5]! ^= 0x10)), /checksum mismatch/],
    ["a flipped bit in the first payload byte", patched((b) => (b[16]! ^= 1)), /checksum mismatch/],
  ])("%s", (_, bytes, message) => {
    expect(() => loadSearchIndex(bytes)).toThrow(SearchIndexError);
    expect(() => loadSearchIndex(bytes)).toThrow(message);
  });
});
