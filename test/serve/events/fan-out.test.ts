// The event stream's fan-out (src/serve/events/fan-out.ts): batches written to every open stream group by group, in
// slices, in order, each to the streams open when it was pushed, the first slice at once and the rest after pending
// I/O; an event before a heartbeat still going out; a batch's bytes made once per group.
import { setImmediate as turn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createFanOut } from "../../../src/serve/events/fan-out.ts";

interface Fake {
  since: number;
  got: string[];
}
interface FakeGroup {
  since: number;
  members: Set<Fake>;
}

/** One group of `n` streams open from the start, and a fan-out that writes each batch's label to them. */
function setUp(n: number) {
  const group: FakeGroup = { since: 0, members: new Set() };
  for (let i = 0; i < n; i++) group.members.add({ since: 0, got: [] });
  const groups = new Map([["all", group]]);
  const fan = createFanOut(groups, (s: Fake, label: string) => s.got.push(label));
  return { group, groups, fan, streams: () => [...group.members] };
}

describe("createFanOut", () => {
  it("writes each batch to the streams open when it came, in order, a slice at a time", async () => {
    const { group, fan, streams } = setUp(0);
    const join = () => {
      const s: Fake = { since: fan.seq, got: [] };
      group.members.add(s);
      return s;
    };
    const early = Array.from({ length: 1000 }, join);
    fan.push(() => "a", 0, true);
    // The first slice went out at once; with no time to spare, not all of it.
    const first = early.filter((s) => s.got.length === 1).length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(1000);
    const late = join();
    const gone = early[999]!;
    group.members.delete(gone); // closed before its turn came
    fan.push(() => "b", 0, true);
    let turns = 0;
    while (early[998]!.got.length < 2 || late.got.length < 1) {
      await turn();
      if (++turns > 1000) throw new Error("the fan-out never finished");
    }
    expect(turns).toBeGreaterThan(1);
    expect(early.slice(0, 999).every((s) => s.got.join() === "a,b")).toBe(true);
    expect(late.got).toEqual(["b"]);
    expect(gone.got).toEqual([]);
    expect(streams().length).toBe(1000);
  });

  it("writes a batch whole at once when its slice allows, and the next one in slices of its own", async () => {
    const { fan, streams } = setUp(1000);
    fan.push(() => "event", 60_000, true);
    expect(streams().every((s) => s.got.join() === "event")).toBe(true);
    fan.push(() => "beat", 0, false);
    expect(streams().filter((s) => s.got.length === 2).length).toBeLessThan(1000);
    while (!streams().every((s) => s.got.length === 2)) await turn();
  });

  it("writes an event at once while a heartbeat is going out, and the heartbeat after it", async () => {
    const { fan, streams } = setUp(1000);
    fan.push(() => "beat", 0, false);
    const beaten = streams().filter((s) => s.got.length === 1).length;
    expect(beaten).toBeLessThan(1000);
    fan.push(() => "event", 60_000, true);
    // Every stream has the event at once; the heartbeat has not gone further meanwhile.
    expect(streams().every((s) => s.got.includes("event"))).toBe(true);
    expect(streams().filter((s) => s.got.includes("beat")).length).toBeLessThan(1000);
    while (!streams().every((s) => s.got.length === 2)) await turn();
    const order = (got: string[]) => got.join();
    expect(streams().filter((s) => order(s.got) === "beat,event").length).toBeGreaterThanOrEqual(beaten);
    expect(streams().filter((s) => order(s.got) === "event,beat").length).toBeGreaterThan(0);
  });

  it("makes a batch's bytes once per group, none for a group made after it, and skips a group given none", async () => {
    const made: string[] = [];
    const groups = new Map<string, FakeGroup>();
    const add = (name: string, since: number, n: number) => {
      const g: FakeGroup = { since, members: new Set(Array.from({ length: n }, () => ({ since, got: [] }))) };
      groups.set(name, g);
      return g;
    };
    const a = add("a", 0, 300);
    const b = add("b", 0, 300);
    const fan = createFanOut(groups, (s: Fake, bytes: string) => s.got.push(bytes));
    const name = (g: FakeGroup) => [...groups].find(([, x]) => x === g)![0];
    fan.push(
      (g) => {
        made.push(name(g));
        return g === b ? null : `for ${name(g)}`;
      },
      0,
      true,
    );
    const c = add("c", fan.seq, 5); // while the batch is going out
    while (![...a.members].every((s) => s.got.length === 1)) await turn();
    for (let i = 0; i < 10; i++) await turn();
    expect(made).toEqual(["a", "b"]);
    expect([...b.members].every((s) => s.got.length === 0)).toBe(true);
    expect([...c.members].every((s) => s.got.length === 0)).toBe(true);
    fan.push(() => "later", 60_000, true);
    expect([...c.members].every((s) => s.got.join() === "later")).toBe(true);
  });

  it("forgets what it has not written when cleared", async () => {
    const { fan, streams } = setUp(1000);
    fan.push(() => "a", 0, true);
    fan.clear();
    for (let i = 0; i < 10; i++) await turn();
    const got = streams().filter((s) => s.got.length > 0).length;
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(1000);
    fan.push(() => "b", 0, true); // still works afterwards
    for (let i = 0; i < 100; i++) await turn();
    expect(streams().every((s) => s.got.at(-1) === "b")).toBe(true);
  });
});
