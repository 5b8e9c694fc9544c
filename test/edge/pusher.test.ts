// The pusher's bookkeeping (src/edge/pusher.ts) with fronts that are plain objects keeping what they were told, one
// of them unreachable on demand: when a front is in step, what it is pushed, and the hold it is allowed.
import { describe, expect, it } from "vitest";
import type { Front, KeyState } from "../../src/edge/front.ts";
import { renderEdgeMetrics } from "../../src/edge/metrics.ts";
import { createEdgePusher } from "../../src/edge/pusher.ts";
import type { EdgeEvent } from "../../src/edge/pusher.ts";
import type { KeyRecord } from "../../src/keys/keys-file.ts";

const h = (c: string) => `sha256:${c.repeat(64)}`;
const record = (name: string, hash: string, more: Partial<KeyRecord> = {}): KeyRecord => ({
  name,
  hash,
  created: "2026-11-01T00:00:00Z",
  ...more,
});

/** A front that keeps what it is told, and fails while `down`. */
function keeping(name: string) {
  const told = { pushes: [] as KeyState[][], resyncs: 0, down: false };
  const front: Front = {
    name,
    push: (changes) => {
      if (told.down) return Promise.reject(new Error("connect ECONNREFUSED"));
      told.pushes.push([...changes]);
      return Promise.resolve();
    },
    resync: () => {
      if (told.down) return Promise.reject(new Error("connect ECONNREFUSED"));
      told.resyncs++;
      return Promise.resolve();
    },
  };
  return { front, told };
}

async function until(f: () => boolean): Promise<void> {
  for (const start = Date.now(); !f(); await new Promise((r) => setTimeout(r, 5)))
    if (Date.now() - start > 5_000) throw new Error("not so within 5 s");
}

describe("createEdgePusher", () => {
  it("resyncs at start, pushes each change, falls out of step on a failed push and back after a resync", async () => {
    const a = keeping("a");
    const b = keeping("b");
    const events: EdgeEvent[] = [];
    const pusher = createEdgePusher({
      fronts: [a.front, b.front],
      keyLimit: { rate: 50, burst: 200 },
      clock: Date.now,
      onEvent: (e) => events.push(e),
    });
    try {
      expect(pusher.mayHold("a", h("1"), "apikey=x")).toBe(false); // before the keys: out of step
      pusher.keysLoaded([record("k1", h("1")), record("k2", h("2"), { revoked: "2026-11-02T00:00:00Z" })]);
      await pusher.idle();
      expect([a.told.resyncs, b.told.resyncs]).toEqual([1, 1]);
      expect(pusher.mayHold("a", h("1"), "apikey=x")).toBe(true); // valid and known
      expect(pusher.mayHold("a", h("2"), "apikey=y")).toBe(true); // revoked and known
      expect(pusher.mayHold("a", h("3"), "apikey=z")).toBe(false); // unknown: a key made later works at once
      expect(pusher.mayHold(undefined, h("1"), "apikey=x")).toBe(false);
      expect(pusher.mayHold("c", h("1"), "apikey=x")).toBe(false);

      b.told.down = true;
      pusher.keysLoaded([record("k1", h("1"), { rate: 5 }), record("k2", h("2"), { revoked: "2026-11-02T00:00:00Z" })]);
      await pusher.idle();
      // Pushed, and again a second later (a check answered under the old keys meanwhile): idle() waits for both.
      const change = [{ hash: h("1"), valid: { name: "k1", rate: 5, burst: 20, until: Infinity } }];
      expect(a.told.pushes).toEqual([change, change]);
      expect(pusher.status().map((s) => [s.name, s.inStep])).toEqual([
        ["a", true],
        ["b", false],
      ]);
      expect(events).toMatchObject([
        { event: "edge_front_in_step", front: "a" },
        { event: "edge_front_in_step", front: "b" },
        { event: "edge_front_out_of_step", front: "b", error: { message: "connect ECONNREFUSED" } },
      ]);
      expect(pusher.mayHold("b", h("1"), "apikey=x")).toBe(false);
      expect(renderEdgeMetrics(pusher.status())).toContain('flash_sale_edge_front_in_step{front="b"} 0');
      expect(renderEdgeMetrics(pusher.status())).toContain('flash_sale_edge_pushes_total{front="b",result="failed"} 1');

      b.told.down = false; // the retried resync reaches it
      await until(() => pusher.status()[1]!.inStep);
      expect(b.told.resyncs).toBe(2);
      expect(events.at(-1)).toEqual({ event: "edge_front_in_step", front: "b" });
      expect(pusher.mayHold("b", h("1"), "apikey=x")).toBe(true);
    } finally {
      await pusher.close();
    }
  });

  it("pushes the end of a replaced key's grace at its instant, with no reload", async () => {
    const a = keeping("a");
    const pusher = createEdgePusher({ fronts: [a.front], keyLimit: { rate: 50, burst: 200 }, clock: Date.now });
    try {
      const until0 = new Date(Date.now() + 100).toISOString();
      pusher.keysLoaded([record("k1", h("1"), { previous: [{ hash: h("0"), until: until0 }] })]);
      await until(() => a.told.pushes.length > 0);
      expect(a.told.pushes[0]).toEqual([{ hash: h("0"), valid: null }]);
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(until0));
    } finally {
      await pusher.close();
    }
  });
});
