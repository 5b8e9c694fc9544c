// The byte-bounded LRU of the variant cache and the templates: the least recently used entries go first, also when
// the most recent entry is asked for again and again (a list's template on every request: not moved, kept newest).
import { describe, expect, it } from "vitest";
import { ByteLru } from "../../../src/serve/bodies/byte-lru.ts";

describe("ByteLru", () => {
  it.each([
    // [asks between the sets, what is left after `d` (30 bytes) is set into 100 bytes holding a, b, c of 30]
    [[], ["b", "c", "d"]],
    [["a"], ["c", "a", "d"]],
    [
      ["c", "c", "a", "a"],
      ["c", "a", "d"],
    ],
    [
      ["a", "b", "c", "c"],
      ["b", "c", "d"],
    ],
    [
      ["b", "a", "b", "b"],
      ["a", "b", "d"],
    ],
  ])("asked for %j: keeps %j", (asks, left) => {
    const lru = new ByteLru<string>(100);
    for (const k of ["a", "b", "c"]) lru.set(k, k, 30);
    for (const k of asks) expect(lru.get(k)).toBe(k);
    lru.set("d", "d", 30);
    expect(["a", "b", "c", "d"].filter((k) => lru.get(k) !== undefined).sort()).toEqual([...left].sort());
    expect(lru.bytes).toBe(90);
  });

  it("an entry evicted while newest, set again, is newest again", () => {
    const lru = new ByteLru<string>(50);
    lru.set("a", "a", 40);
    lru.set("b", "b", 60); // evicts a, then b itself (over the budget alone)
    expect(lru.size).toBe(0);
    lru.set("a", "a", 20);
    lru.set("c", "c", 20);
    expect(lru.get("a")).toBe("a"); // moved: c is now the oldest
    lru.set("d", "d", 20);
    expect(lru.get("c")).toBeUndefined();
    expect(lru.get("a")).toBe("a");
    expect(lru.get("d")).toBe("d");
  });
});
