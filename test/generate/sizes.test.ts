// Size label order as a table: each row a list of labels, and the list compareSizeLabels sorts it into.
import { describe, expect, it } from "vitest";
import { compareSizeLabels } from "../../src/generate/size-order.ts";

const sorted = (labels: readonly string[]) => [...labels].sort(compareSizeLabels);

/** Rows with no two labels that compare equal: the order is total, so any input order gives the same output. */
const TOTAL: [name: string, input: string[], expected: string[]][] = [
  ["whole numbers, numerically (not as text)", ["10", "8", "12", "9", "2"], ["2", "8", "9", "10", "12"]],
  ["half sizes between their neighbours", ["10.5", "10", "11", "9.5", "9"], ["9", "9.5", "10", "10.5", "11"]],
  ["decimals by value, not by digits", ["8.25", "8.5", "8.125"], ["8.125", "8.25", "8.5"]],
  [
    "letter sizes XXS..XXXL in their order",
    ["XL", "S", "XXL", "M", "XXXL", "XS", "L", "XXS"],
    ["XXS", "XS", "S", "M", "L", "XL", "XXL", "XXXL"],
  ],
  ["letter sizes in any case", ["xl", "s", "M", "xs"], ["xs", "s", "M", "xl"]],
  ["toddler sizes by number", ["4T", "2T", "3T"], ["2T", "3T", "4T"]],
  ["a bare number before the same number with a suffix", ["2T", "2"], ["2", "2T"]],
  ["suffixes of one number in code-unit order", ["8W", "8N", "8M"], ["8M", "8N", "8W"]],
  [
    "waist x inseam by waist, then by the rest as text",
    ["32x32", "30x30", "32x30", "34x30"],
    ["30x30", "32x30", "32x32", "34x30"],
  ],
  ["letter sizes, then numbers, then the rest", ["10", "One Size", "M", "8", "S"], ["S", "M", "8", "10", "One Size"]],
  [
    "the rest in code-unit order (capitals first)",
    ["Regular", "petite", "One Size", "Tall"],
    ["One Size", "Regular", "Tall", "petite"],
  ],
  ["2XL is a letter size, after XL", ["2XL", "XL", "S"], ["S", "XL", "2XL"]],
  [
    "counted X's among the letter sizes, each just after the same size in X's",
    ["3XL", "L", "2XL", "XL", "4XL", "XXL", "XXXL", "5XL"],
    ["L", "XL", "XXL", "2XL", "XXXL", "3XL", "4XL", "5XL"],
  ],
  ["2XS and 3XS before XS", ["XS", "2XS", "S", "3XS"], ["3XS", "2XS", "XS", "S"]],
  ["plus sizes 1X, 2X, 3X after L", ["2X", "1X", "L", "3X", "M"], ["M", "L", "1X", "2X", "3X"]],
  ["counted X's before numbers", ["10", "2XL", "2"], ["2XL", "2", "10"]],
  ["7XL is not a letter size: a number", ["7XL", "XL", "8"], ["XL", "7XL", "8"]],
  ["a letter size with spaces around it is not one", [" M", "XL", "L"], ["L", "XL", " M"]],
  ["one label", ["M"], ["M"]],
  ["no labels", [], []],
];

/** Rows with labels that compare equal (0): they keep their input order (Array#sort is stable). */
const TIES: [name: string, input: string[], expected: string[]][] = [
  ["the same label twice", ["M", "8", "M"], ["M", "M", "8"]],
  ["one letter size in two cases", ["m", "M"], ["m", "M"]],
  ["one letter size in two cases, the other way round", ["M", "m"], ["M", "m"]],
  ["a number with a leading zero", ["08", "8"], ["08", "8"]],
  ["a number with a leading zero, the other way round", ["8", "08"], ["8", "08"]],
  ["one number written two ways", ["9", "8.50", "8.5"], ["8.50", "8.5", "9"]],
];

describe("compareSizeLabels", () => {
  it.each(TOTAL)("%s: %j -> %j", (_name, input, expected) => {
    expect(sorted(input)).toEqual(expected);
    expect(sorted([...input].reverse())).toEqual(expected);
    expect(sorted(expected)).toEqual(expected);
  });

  it.each(TIES)("ties keep their order, %s: %j -> %j", (_name, input, expected) => {
    expect(sorted(input)).toEqual(expected);
  });

  it("is antisymmetric and reflexive over every label in the tables", () => {
    const labels = [...new Set([...TOTAL, ...TIES].flatMap(([, input]) => input))];
    for (const a of labels) {
      expect(compareSizeLabels(a, a)).toBe(0);
      for (const b of labels) expect(Math.sign(compareSizeLabels(a, b)) + Math.sign(compareSizeLabels(b, a))).toBe(0);
    }
  });
});
