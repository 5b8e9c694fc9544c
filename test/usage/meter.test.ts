// The meter on its own: counts per key, minute and endpoint by status class, batches that are sent again until
// acknowledged, and the bound past which the oldest minutes are dropped (and counted).
import { describe, expect, it } from "vitest";
import { ROUTE_INDEX } from "../../src/api/routing.ts";
import { classOf, Meter } from "../../src/usage/meter.ts";

const SALES = ROUTE_INDEX.sale_list;

const T = Date.parse("2026-11-22T17:00:00Z");
const MIN = 60_000;

describe("classOf", () => {
  it.each([
    [200, 0],
    [206, 0],
    [304, 1],
    [400, 2],
    [401, 2],
    [404, 2],
    [429, 3],
    [500, 4],
    [503, 4],
  ])("%i is class %i", (status, cls) => expect(classOf(status)).toBe(cls));
});

describe("Meter", () => {
  it("counts per key and minute, and hands everything over in one batch", () => {
    const m = new Meter("p", 1000);
    m.count("a", SALES, 200, 100, T);
    m.count("a", SALES, 404, 10, T + 1000);
    m.count("b", SALES, 429, 5, T + 2000);
    m.count("a", SALES, 304, 0, T + MIN + 5);
    const batch = m.take()!;
    expect(batch.id).toBe("p:1");
    expect(batch.rows).toEqual([
      { key: "a", minute: T, route: "sale_list", counts: [1, 0, 1, 0, 0, 110], last: T + 1000 },
      { key: "a", minute: T + MIN, route: "sale_list", counts: [0, 1, 0, 0, 0, 0], last: T + MIN + 5 },
      { key: "b", minute: T, route: "sale_list", counts: [0, 0, 0, 1, 0, 5], last: T + 2000 },
    ]);
    expect(m.rows).toBe(3);
  });

  it("counts each endpoint (route class) of a key's minute apart, and hands over only those used", () => {
    const m = new Meter("p", 1000);
    m.count("a", ROUTE_INDEX.product, 200, 7, T);
    m.count("a", SALES, 304, 0, T + 1);
    m.count("a", ROUTE_INDEX.product, 404, 3, T + 2);
    m.count("a", ROUTE_INDEX.other, 404, 1, T + 3);
    expect(m.rows).toBe(1); // one live row a key and minute, whatever the endpoints
    expect(m.take()!.rows).toEqual([
      { key: "a", minute: T, route: "sale_list", counts: [0, 1, 0, 0, 0, 0], last: T + 3 },
      { key: "a", minute: T, route: "product", counts: [1, 0, 1, 0, 0, 10], last: T + 3 },
      { key: "a", minute: T, route: "other", counts: [0, 0, 1, 0, 0, 1], last: T + 3 },
    ]);
  });

  it("sends an unacknowledged batch again (same ID, same rows) and counts meanwhile into the next", () => {
    const m = new Meter("p", 1000);
    m.count("a", SALES, 200, 1, T);
    const first = m.take()!;
    m.count("a", SALES, 500, 1, T + 10);
    expect(m.take()).toBe(first);
    m.acknowledge(first);
    const second = m.take()!;
    expect(second.id).toBe("p:2");
    expect(second.rows).toEqual([
      { key: "a", minute: T, route: "sale_list", counts: [0, 0, 0, 0, 1, 1], last: T + 10 },
    ]);
    m.acknowledge(second);
    expect(m.take()).toBeNull();
    expect(m.rows).toBe(0);
  });

  it("keeps at most maxRows: the oldest minutes go first, and their requests are counted as dropped", () => {
    const m = new Meter("p", 3);
    // One key over six minutes: six rows, of which the newest three are kept.
    for (let i = 0; i < 6; i++) for (let r = 0; r <= i; r++) m.count("a", SALES, 200, 1, T + i * MIN);
    expect(m.rows).toBe(3);
    expect(m.dropped).toBe(1 + 2 + 3);
    const batch = m.take()!;
    expect(batch.rows.map((r) => [r.minute, r.counts[0]])).toEqual([
      [T + 3 * MIN, 4],
      [T + 4 * MIN, 5],
      [T + 5 * MIN, 6],
    ]);
  });

  it("holds one row per key whatever the traffic (memory grows with keys, not requests)", () => {
    const m = new Meter("p", 1000);
    for (let i = 0; i < 100_000; i++) m.count(`k${i % 10}`, SALES, 200, 1, T + (i % 1000));
    expect(m.rows).toBe(10);
  });
});
