import { describe, expect, it } from "vitest";
import { fold, tokenize, tokenizeQuery } from "../../src/search/tokenize.ts";

describe("fold", () => {
  it.each([
    ["Café", "cafe"],
    ["CRÈME BRÛLÉE", "creme brulee"],
    ["Straße", "strasse"],
    ["Ångström", "angstrom"],
    ["Œuvre", "oeuvre"],
    ["Søren", "soren"],
    ["Łódź", "lodz"],
    ["ﬁne", "fine"],
    ["５０１", "501"],
  ])("%s -> %s", (input, expected) => {
    expect(fold(input)).toBe(expected);
  });
});

describe("tokenize (documents)", () => {
  it.each<[string, string[]]>([
    ["Black Dress", ["black", "dress"]],
    ["BLACK dress", ["black", "dress"]],
    ["Café Table", ["cafe", "tabl"]],
    ["cafe table", ["cafe", "tabl"]],
    ["Levi's 501 Jeans", ["levi", "501", "jean"]],
    ["Levi’s", ["levi"]],
    ["t-shirt", ["t", "shirt", "tshirt"]],
    ["T-Shirts", ["t", "shirt", "tshirt"]],
    ["tshirt", ["tshirt"]],
    ["ready-to-wear", ["readi", "wear", "readytowear"]],
    ["the dress of the year", ["dress", "year"]],
    ["A and the", []],
    ["dresses, boots & running shoes!", ["dress", "boot", "run", "shoe"]],
    ["size 8.5", ["size", "8", "5"]],
    ["", []],
    ["  ---  ", []],
    ["Ünïcödé", ["unicod"]],
    ["日本製 cotton", ["日本製", "cotton"]],
  ])("%j -> %j", (input, expected) => {
    expect(tokenize(input)).toEqual(expected);
  });

  it("keeps repeats, since they are term frequencies", () => {
    expect(tokenize("dress dresses DRESS")).toEqual(["dress", "dress", "dress"]);
  });

  it("cuts very long words to 64 characters", () => {
    const [term] = tokenize("x".repeat(100));
    expect(term).toBe("x".repeat(64));
  });
});

describe("tokenizeQuery", () => {
  it.each<[string, string[]]>([
    ["t-shirt", ["tshirt"]],
    ["T-Shirts", ["tshirt"]],
    ["tshirt", ["tshirt"]],
    ["t shirt", ["t", "shirt"]],
    ["Running Boots", ["run", "boot"]],
    ["the", []],
  ])("%j -> %j", (input, expected) => {
    expect(tokenizeQuery(input)).toEqual(expected);
  });

  it.each([
    ["dresses", "dress"],
    ["boots", "boot"],
    ["running", "run"],
    ["runs", "run"],
    ["jackets", "jacket"],
    ["knitted", "knit"],
    ["Café", "cafe"],
  ])("a query for %j finds documents that say %j", (query, doc) => {
    expect(tokenizeQuery(query)).toEqual(tokenize(doc));
  });

  it.each([["t-shirt"], ["tshirt"], ["T-Shirt"], ["TSHIRT"]])("%j finds a document saying t-shirt", (query) => {
    const docTerms = new Set(tokenize("Basic t-shirt"));
    expect(tokenizeQuery(query).every((t) => docTerms.has(t))).toBe(true);
  });
});
