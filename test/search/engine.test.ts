import { describe, expect, it } from "vitest";
import { buildSearchIndex } from "../../src/search/index-builder.ts";
import { loadSearchIndex, type SearchIndex } from "../../src/search/index-format.ts";
import type { SearchDoc, SearchQuery } from "../../src/search/types.ts";
import { searchQuery } from "../../src/search/types.ts";

const NOW = 1_800_000_000;
const always = (store: SearchDoc["windows"][number]["store"]) => [{ from: NOW - 86_400, to: null, store }];

function doc(id: number, name: string, description: string, rest: Partial<SearchDoc> = {}): SearchDoc {
  return { id, name, description, brand: "Acme", colorGroups: [], sizeKeys: [], windows: always("women"), ...rest };
}

// 110 is listed first and is an exact copy of 101 (apart from its ID): ties must still come out by ID.
const CORPUS: SearchDoc[] = [
  doc(110, "Black Midi Dress", "A flowing dress in soft crepe. Pairs well with boots.", {
    brand: "Calvin Klein",
    colorGroups: ["black"],
    sizeKeys: ["WoAp:S", "WoAp:M"],
  }),
  doc(101, "Black Midi Dress", "A flowing dress in soft crepe. Pairs well with boots.", {
    brand: "Calvin Klein",
    colorGroups: ["black"],
    sizeKeys: ["WoAp:S", "WoAp:M"],
  }),
  doc(102, "Red Wrap Dress", "Wrap dress with a tie waist, also made in black.", {
    brand: "Diane von Furstenberg",
    colorGroups: ["red"],
    sizeKeys: ["WoAp:M", "WoAp:L"],
  }),
  doc(103, "Leather Ankle Boots", "Black leather boots with a stacked heel.", {
    brand: "Calvin Klein Jeans",
    colorGroups: ["black", "brown"],
    sizeKeys: ["WoSh:8", "WoSh:8.5"],
  }),
  doc(104, "Running Shoes", "Lightweight shoes for runners who run daily.", {
    brand: "Nike",
    colorGroups: ["blue", "white"],
    sizeKeys: ["MeSh:10"],
    windows: always("men"),
  }),
  doc(105, "Classic T-Shirt", "Cotton tee that fits like a 501.", {
    brand: "Levi's",
    colorGroups: ["white"],
    sizeKeys: ["MeAp:L"],
    windows: always("men"),
  }),
  doc(106, "Kids Rain Boot", "Waterproof boot for puddles.", {
    brand: "Hunter",
    colorGroups: ["yellow"],
    sizeKeys: ["KiSh:1"],
    gender: "unisex",
    windows: always("kids"),
  }),
  doc(107, "Girls Party Dress", "Sparkly dress for parties.", {
    brand: "Calvin Klein",
    colorGroups: ["pink"],
    sizeKeys: ["KiAp:6"],
    gender: "girl",
    windows: always("kids"),
  }),
  doc(108, "Boys Denim Jacket", "Denim jacket with snaps.", {
    brand: "Levi's",
    colorGroups: ["blue"],
    sizeKeys: ["KiAp:6"],
    gender: "boy",
    windows: always("kids"),
  }),
  doc(109, "Café Table", "Round bistro table with a black steel frame.", {
    brand: "Crate & Barrel",
    colorGroups: ["black"],
    windows: always("home"),
  }),
  doc(111, "Secret Dress", "Not on sale yet.", { windows: [{ from: NOW + 100, to: NOW + 200, store: "women" }] }),
  doc(112, "Old Dress", "Its sale has ended.", { windows: [{ from: NOW - 500, to: NOW - 10, store: "women" }] }),
  doc(113, "Never Dress", "In no sale at all.", { windows: [] }),
];

const index = loadSearchIndex(buildSearchIndex(CORPUS));

function query(q: string, rest: Partial<SearchQuery> = {}): SearchQuery {
  return searchQuery(q, NOW, { rows: 100, ...rest });
}
const find = (q: string, rest: Partial<SearchQuery> = {}, idx: SearchIndex = index) => idx.search(query(q, rest)).ids;
const findSorted = (q: string, rest: Partial<SearchQuery> = {}) => find(q, rest).sort((a, b) => a - b);

describe("full text", () => {
  it.each<[string, string, number[]]>([
    ["every term must match", "black dress", [101, 102, 110]],
    ["one term", "dress", [101, 102, 107, 110]],
    ["case does not matter", "BLACK DRESS", [101, 102, 110]],
    ["an unknown word finds nothing, not everything", "dress xyzzy", []],
    ["a misspelling within one edit finds the word", "dresss", [101, 102, 107, 110]],
    ["a short misspelling is not forgiven (3 letters)", "drs", []],
    ["stop words alone find nothing", "the and of", []],
    ["stop words are ignored next to real words", "the dress", [101, 102, 107, 110]],
    ["a stemmed form finds the same products", "dresses", [101, 102, 107, 110]],
    ["boot finds boots", "boot", [101, 103, 106, 110]],
    ["running finds run and runners' shoes", "run", [104]],
    ["accents fold", "CAFÉ", [109]],
    ["accents fold the other way", "cafe", [109]],
    ["t-shirt", "t-shirt", [105]],
    ["tshirt", "tshirt", [105]],
    ["t shirt", "t shirt", [105]],
    ["numbers", "501", [105]],
    ["words only in the description", "crepe", [101, 110]],
    ["brand words are not full text", "calvin", []],
  ])("%s: %j", (_, q, expected) => {
    expect(findSorted(q)).toEqual(expected);
  });

  it("typos: false matches exactly: a misspelling finds nothing", () => {
    expect(find("dresss", { typos: false })).toEqual([]);
    expect(findSorted("dress", { typos: false })).toEqual([101, 102, 107, 110]);
  });

  it("ranks a name match above a description mention", () => {
    const ids = find("boots");
    expect(ids.slice(0, 2).sort()).toEqual([103, 106]);
    expect(ids.slice(2)).toEqual([101, 110]);
  });

  it("ranks a doc with both terms in the name above one with a term in the description", () => {
    expect(find("black dress").at(-1)).toBe(102);
  });

  it("breaks exact ties by product ID", () => {
    const ids = find("midi");
    expect(ids).toEqual([101, 110]);
  });
});

describe("filters", () => {
  it.each<[string, string, Partial<SearchQuery>, number[]]>([
    ["brand narrows", "dress", { brands: ["calvin"] }, [101, 107, 110]],
    ["brand is full text, stemmed and case folded", "boots", { brands: ["KLEIN jean"] }, [103]],
    ["brand terms are ANDed within one brand param", "dress", { brands: ["calvin furstenberg"] }, []],
    ["repeated brand params are ORed", "dress", { brands: ["calvin", "furstenberg"] }, [101, 102, 107, 110]],
    ["an unknown brand matches nothing", "dress", { brands: ["gucci"] }, []],
    ["an unknown brand ORed with a known one", "dress", { brands: ["gucci", "diane"] }, [102]],
    ["store", "dress", { stores: ["kids"] }, [107]],
    ["stores are ORed", "dress", { stores: ["kids", "women"] }, [101, 102, 107, 110]],
    ["a store where the products are not", "dress", { stores: ["home"] }, []],
    ["colour", "dress", { colors: ["red"] }, [102]],
    ["colours are ORed", "dress", { colors: ["red", "pink"] }, [102, 107]],
    ["any SKU's colour counts", "boots", { colors: ["brown"] }, [103]],
    ["gender", "dress", { genders: ["girl"] }, [107]],
    ["genders are ORed; products without one never match", "boot", { genders: ["unisex", "girl"] }, [106]],
    ["size", "dress", { sizes: ["WoAp:L"] }, [102]],
    ["sizes are ORed", "dress", { sizes: ["WoAp:L", "KiAp:6"] }, [102, 107]],
    ["any SKU's size counts", "dress", { sizes: ["WoAp:S"] }, [101, 110]],
    ["size keys are exact", "dress", { sizes: ["woap:s"] }, []],
    ["different params are ANDed: colour and size", "dress", { colors: ["black", "red"], sizes: ["WoAp:L"] }, [102]],
    ["different params are ANDed: store and brand", "dress", { stores: ["kids"], brands: ["diane"] }, []],
    ["several stores and a brand", "dress", { stores: ["kids", "men"], brands: ["calvin"] }, [107]],
    ["several stores and a colour", "dress", { stores: ["kids", "men"], colors: ["black", "pink"] }, [107]],
    [
      "different params are ANDed: all of them",
      "dress",
      {
        stores: ["women", "kids"],
        brands: ["calvin"],
        colors: ["black", "pink"],
        genders: ["girl"],
        sizes: ["KiAp:6"],
      },
      [107],
    ],
  ])("%s", (_, q, rest, expected) => {
    expect(findSorted(q, rest)).toEqual(expected);
  });

  it("brand terms with bitsets of their own and without give the same answer, asked once or again", () => {
    // 300 docs: "calvin" and "klein" are in enough brands to have a bitset (1/32 of the docs), "jeans" is not.
    const docs = Array.from({ length: 300 }, (_, i) =>
      doc(1 + i, "Widget", "", { brand: i < 3 ? "Calvin Klein Jeans" : i < 150 ? "Calvin Klein" : "Acme" }),
    );
    const idx = loadSearchIndex(buildSearchIndex(docs));
    const ids = (brands: string[]) => idx.search(query("widget", { brands, rows: 300 })).ids.sort((a, b) => a - b);
    for (let round = 0; round < 2; round++) {
      expect(ids(["jeans calvin"])).toEqual([1, 2, 3]);
      expect(ids(["klein calvin"])).toEqual(Array.from({ length: 150 }, (_, i) => 1 + i));
      expect(ids(["calvin", "acme"])).toHaveLength(300);
      expect(ids(["acme jeans"])).toEqual([]);
      expect(ids(["the"])).toEqual([]);
    }
  });

  it("counts only the filtered matches in total", () => {
    expect(index.search(query("dress", { colors: ["black"] })).total).toBe(2);
  });
});

describe("paging", () => {
  const all = find("dress");
  it.each([
    [0, 2],
    [2, 2],
    [1, 3],
    [3, 10],
    [4, 10],
    [100, 10],
    [2_147_483_647, 100],
  ])("start %i rows %i is that slice of the full ranking, with the full total", (start, rows) => {
    const result = index.search(query("dress", { start, rows }));
    expect(result.ids).toEqual(all.slice(start, start + rows));
    expect(result.total).toBe(4);
  });
});

describe("time windows", () => {
  const T = 1_000_000;
  /** Three products in sales that begin and end at different instants, in two stores. */
  const timedIndex = () =>
    loadSearchIndex(
      buildSearchIndex([
        doc(1, "widget one", "", { windows: [{ from: T, to: T + 100, store: "women" }] }),
        doc(2, "widget two", "", { windows: [{ from: T + 50, to: null, store: "men" }] }),
        doc(3, "widget three", "", {
          windows: [
            { from: T, to: T + 20, store: "women" },
            { from: T + 80, to: T + 150, store: "men" },
          ],
        }),
      ]),
    );
  const timed = timedIndex();
  const at = (now: number, stores: SearchQuery["stores"] = []) => timed.search(query("widget", { now, stores }));

  // [seconds after T, stores, products found, next change in seconds after T]
  it.each<[number, SearchQuery["stores"], number[], number | null]>([
    [-1, [], [], 0],
    [0, [], [1, 3], 20],
    [19, [], [1, 3], 20],
    [20, [], [1], 50],
    [49, [], [1], 50],
    [50, [], [1, 2], 80],
    [80, [], [1, 2, 3], 100],
    [99, [], [1, 2, 3], 100],
    [100, [], [2, 3], 150],
    [150, [], [2], null],
    [1_000_000, [], [2], null],
    [10, ["women"], [1, 3], 20],
    [10, ["men"], [], 20],
    [90, ["women"], [1], 100],
    [90, ["men"], [2, 3], 100],
    [90, ["home"], [], 100],
    [90, ["home", "men"], [2, 3], 100],
  ])("at T + %i in stores %j: %j, next change at T + %s", (offset, stores, expected, next) => {
    const result = at(T + offset, stores);
    expect(result.ids.sort()).toEqual(expected);
    expect(result.total).toBe(expected.length);
    expect(result.nextChange).toBe(next === null ? null : T + next);
  });

  it("answers the same when queried out of time order (cached intervals)", () => {
    const times = [T + 10, T + 90, T - 5, T + 200, T + 10, T + 60, T + 90, T + 10, T + 19, T + 20];
    for (let round = 0; round < 3; round++) {
      for (const now of times) {
        for (const stores of [[], ["women"], ["men"], ["women", "men"]] as SearchQuery["stores"][]) {
          const fresh = timedIndex();
          expect(at(now, stores)).toEqual(fresh.search(query("widget", { now, stores })));
        }
      }
    }
  });

  it("never shows upcoming or ended products", () => {
    expect(findSorted("dress")).not.toContain(111);
    expect(findSorted("dress")).not.toContain(112);
    expect(findSorted("dress")).not.toContain(113);
    expect(find("secret", { now: NOW + 100 })).toEqual([111]);
    expect(find("secret", { now: NOW + 200 })).toEqual([]);
  });
});
