// boundedMemo: each kept argument computed once, at most `max` kept, the least recently used dropped first.
import { describe, expect, it } from "vitest";
import { boundedMemo } from "../src/bounded-memo.ts";

describe("boundedMemo", () => {
  it("computes a kept argument once, keeps at most max, and drops the least recently used", () => {
    const computed: string[] = [];
    const upper = boundedMemo(2, (s) => (computed.push(s), s.toUpperCase()));
    expect([upper("a"), upper("b"), upper("a")]).toEqual(["A", "B", "A"]);
    expect(computed).toEqual(["a", "b"]);
    upper("c"); // b is the least recently used (a was asked again): b goes
    expect([upper("a"), upper("c")]).toEqual(["A", "C"]);
    expect(computed).toEqual(["a", "b", "c"]);
    upper("b");
    expect(computed).toEqual(["a", "b", "c", "b"]);
  });

  it("keeps an answer of null or undefined like any other", () => {
    let calls = 0;
    const none = boundedMemo(4, () => (calls++, null));
    expect([none("x"), none("x")]).toEqual([null, null]);
    expect(calls).toBe(1);
  });
});
