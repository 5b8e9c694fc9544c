import { describe, expect, it } from "vitest";
import { TopK } from "../../src/search/top-k.ts";

/** The oracle: sort every entry, best first (higher score, then lower doc), and slice. */
function expected(entries: [number, number][], start: number, rows: number): number[] {
  return [...entries]
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .slice(start, start + rows)
    .map(([, doc]) => doc);
}

describe("TopK", () => {
  it.each([
    ["distinct scores", 200, 1000],
    ["many ties", 200, 3],
    ["all tied", 50, 1],
  ])("keeps the best of %s, for every page", (_, n, distinct) => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const entries: [number, number][] = Array.from({ length: n }, (_, doc) => [Math.floor(rnd() * distinct) / 7, doc]);
    const top = new TopK();
    const pages: [number, number][] = [
      [0, 10],
      [0, 1],
      [5, 10],
      [0, n],
      [n - 3, 10],
      [n, 10],
      [n + 50, 10],
      [3, 0],
    ];
    for (const [start, rows] of pages) {
      top.reset(rows > 0 ? Math.min(start + rows, n) : 0);
      for (const [score, doc] of entries) top.offer(score, doc);
      expect(top.page(start), `start ${start} rows ${rows}`).toEqual(expected(entries, start, rows));
    }
  });

  it("grows past its initial storage", () => {
    const top = new TopK();
    top.reset(5000);
    for (let doc = 0; doc < 5000; doc++) top.offer(doc % 17, doc);
    const page = top.page(0);
    expect(page).toHaveLength(5000);
    expect(page.slice(0, 3)).toEqual([16, 33, 50]);
  });
});
