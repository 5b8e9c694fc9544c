// What a resuming stream missed (src/serve/events/replay.ts): its cursor gives, a few at a time, exactly what the
// first version computed at once (every event of the window sorted, then those after the ID), on random histories.
import { describe, expect, it } from "vitest";
import { createReplay } from "../../../src/serve/events/replay.ts";
import { compareEvents } from "../../../src/serve/events/schedule.ts";
import type { EventType, SaleEvent, Schedule } from "../../../src/serve/events/schedule.ts";
import type { LoadedSnapshot } from "../../../src/snapshot/load.ts";

const REPLAY = { replaySeconds: 1_000, maxSwapEvents: 50 };
const RANK: Record<EventType, number> = { "sale.ends": 0, "sale.begins": 1, "sale.announced": 2, "sale.updated": 3 };

/** A deterministic generator (mulberry32), so that a failure repeats. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function event(type: EventType, pos: number, rnd: () => number): SaleEvent {
  const hash = Array.from({ length: 16 }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"[Math.floor(rnd() * 32)]).join("");
  return {
    id: `${pos}.${RANK[type]}.${hash}`,
    type,
    pos,
    at: pos,
    store: "home",
    key: hash,
    body: { pack: 0 } as never,
  };
}

/** The first version: the window's events sorted, after the ID if held, else after its second. */
function reference(events: SaleEvent[], swaps: SaleEvent[], lastId: string, now: number): SaleEvent[] {
  const m = /^(\d{1,12})\.\d\.[A-Za-z0-9_-]{16}$/.exec(lastId);
  if (!m) return [];
  const since = now - REPLAY.replaySeconds;
  const all = [...events, ...swaps].filter((e) => e.pos > since && e.pos <= now).sort(compareEvents);
  const at = all.findIndex((e) => e.id === lastId);
  if (at >= 0) return all.slice(at + 1);
  return all.filter((e) => e.pos > Math.max(Number(m[1]), since));
}

/** Snapshot data for `record`: every body it copies is the same few bytes. */
const snapshot = { bodies: { get: () => ({ identity: Buffer.from("{}"), links: [] }) } } as unknown as LoadedSnapshot;

describe("createReplay", () => {
  it("gives, a few at a time, exactly the events after the ID (or its second) in the window, in stream order", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = random(seed);
      const replay = createReplay(REPLAY);
      const events: SaleEvent[] = [];
      for (let i = 0; i < 300; i++)
        events.push(event(rnd() < 0.5 ? "sale.begins" : "sale.ends", 1_000 + Math.floor(rnd() * 3_000), rnd));
      events.sort(compareEvents);
      const schedule: Schedule = { events, sales: new Map(), snapshot };
      // Swaps at rising seconds (two at the same second now and then), each's events sorted as swapEvents sorts them.
      const kept: SaleEvent[] = [];
      let at = 1_000;
      for (let k = 0; k < 12; k++) {
        at += Math.floor(rnd() * 300);
        const changes = Array.from({ length: 1 + Math.floor(rnd() * 8) }, () =>
          event(rnd() < 0.5 ? "sale.announced" : "sale.updated", at, rnd),
        ).sort(compareEvents);
        replay.record(changes, snapshot, at);
        kept.push(...changes);
      }
      // What record keeps: the last 50, none older than the window at the last swap.
      const swaps = kept.slice(-REPLAY.maxSwapEvents).filter((e) => e.pos > at - REPLAY.replaySeconds);
      expect(replay.size).toBe(swaps.length);
      const ids = [
        ...events.filter(() => rnd() < 0.1).map((e) => e.id),
        ...swaps.filter(() => rnd() < 0.3).map((e) => e.id),
        `${1_500 + Math.floor(rnd() * 2_500)}.1.AAAAAAAAAAAAAAAA`, // held by no one: from its second
        "0.0.AAAAAAAAAAAAAAAA",
        "99999999999.0.AAAAAAAAAAAAAAAA",
        "not an id",
      ];
      for (const lastId of ids) {
        for (const now of [at, at - 200, 2_500]) {
          const want = reference(events, swaps, lastId, now);
          const cursor = replay.cursor(schedule, lastId, now);
          const got: SaleEvent[] = [];
          for (let part = cursor ? replay.take(cursor, 7) : []; part.length > 0; part = replay.take(cursor!, 7))
            got.push(...part);
          expect([seed, lastId, now, got.map((e) => e.id)]).toEqual([seed, lastId, now, want.map((e) => e.id)]);
          if (want.length === 0) expect(cursor).toBeNull();
        }
      }
    }
  });
});
