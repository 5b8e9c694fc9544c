// The event stream's fan-out (src/serve/events/fan-out.ts): batches written to every open stream in slices, in order,
// each to the streams open when it was pushed, the first slice at once and the rest after pending I/O.
import { setImmediate as turn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createFanOut } from "../../src/serve/events/fan-out.ts";

interface Fake {
  since: number;
  got: string[];
}

describe("createFanOut", () => {
  it("writes each batch to the streams open when it came, in order, a slice at a time", async () => {
    const streams = new Set<Fake>();
    const fan = createFanOut(streams);
    const join = () => {
      const s: Fake = { since: fan.seq, got: [] };
      streams.add(s);
      return s;
    };
    const early = Array.from({ length: 1000 }, join);
    fan.push((s) => s.got.push("a"), 0);
    // The first slice went out at once; with no time to spare, not all of it.
    const first = early.filter((s) => s.got.length === 1).length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(1000);
    const late = join();
    const gone = early[999]!;
    streams.delete(gone); // closed before its turn came
    fan.push((s) => s.got.push("b"), 0);
    let turns = 0;
    while (early[998]!.got.length < 2 || late.got.length < 1) {
      await turn();
      if (++turns > 1000) throw new Error("the fan-out never finished");
    }
    expect(turns).toBeGreaterThan(1);
    expect(early.slice(0, 999).every((s) => s.got.join() === "a,b")).toBe(true);
    expect(late.got).toEqual(["b"]);
    expect(gone.got).toEqual([]);
  });

  it("writes a batch whole at once when its slice allows, and the next one in slices of its own", async () => {
    const streams = new Set<Fake>(Array.from({ length: 1000 }, () => ({ since: 0, got: [] })));
    const fan = createFanOut(streams);
    fan.push((s) => s.got.push("event"), 60_000);
    expect([...streams].every((s) => s.got.join() === "event")).toBe(true);
    fan.push((s) => s.got.push("beat"), 0);
    expect([...streams].filter((s) => s.got.length === 2).length).toBeLessThan(1000);
    while (![...streams].every((s) => s.got.length === 2)) await turn();
  });

  it("forgets what it has not written when cleared", async () => {
    const streams = new Set<Fake>(Array.from({ length: 1000 }, () => ({ since: 0, got: [] })));
    const fan = createFanOut(streams);
    fan.push((s) => s.got.push("a"), 0);
    fan.clear();
    for (let i = 0; i < 10; i++) await turn();
    const got = [...streams].filter((s) => s.got.length > 0).length;
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(1000);
    fan.push((s) => s.got.push("b"), 0); // still works afterwards
    for (let i = 0; i < 100; i++) await turn();
    expect([...streams].every((s) => s.got.at(-1) === "b")).toBe(true);
  });
});
