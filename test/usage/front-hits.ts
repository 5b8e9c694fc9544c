// What the usage tests of a front (nginx) check once its log is followed: cache hits and the front's own 429s
// counted and stored under the key's name, though the API never saw them.
import { expect } from "vitest";
import type { PortalDatabase } from "../../src/db/database.ts";
import type { Usage } from "../../src/usage/hand-over.ts";
import { countsOnDay } from "../../src/usage/store.ts";
import type { Counts } from "../../src/usage/store.ts";

/** The keys and views a front's usage check needs. */
export interface FrontHits {
  /** The front's base URL. */
  url: string;
  /** How many lines the log follower has counted. */
  counted: () => number;
  /** `key`'s stored counts once they reach `n` requests. */
  stored: (key: string, n: number) => Promise<Counts>;
  /** The key named "test" (unlimited at its rate), one named "slow" (1/s, burst 2), and one to wake the follower. */
  keys: { test: string; slow: string; probe: string };
}

/** Probes until the follower counts; then 30 polls (hits counted as "test") and 10 over the rate ("slow"'s 429s). */
export async function expectHitsAndLimitsCounted(front: FrontHits): Promise<void> {
  for (let deadline = Date.now() + 10_000; front.counted() === 0 && Date.now() < deadline;)
    await (await fetch(`${front.url}/v1/products/sizes.json?apikey=${front.keys.probe}`)).arrayBuffer();
  expect(front.counted()).toBeGreaterThan(0);
  const polls = 30;
  let hits = 0;
  for (let i = 0; i < polls; i++) {
    const r = await fetch(`${front.url}/v1/sales/active.json?apikey=${front.keys.test}`);
    await r.arrayBuffer();
    expect(r.status).toBe(200);
    if (r.headers.get("x-cache") === "HIT") hits++;
  }
  expect(hits).toBeGreaterThanOrEqual(polls - 2);
  expect(await front.stored("test", polls)).toMatchObject({ ok: polls, not_modified: 0, client_error: 0, limited: 0 });
  // Over its rate at the edge: the front's own 429s (the API never sees them).
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await fetch(`${front.url}/v1/sales/active.json?apikey=${front.keys.slow}`);
    await r.arrayBuffer();
    statuses.push(r.status);
  }
  const limited = statuses.filter((s) => s === 429).length;
  expect(limited).toBeGreaterThan(0);
  expect(await front.stored("slow", 10)).toMatchObject({ ok: 10 - limited, limited });
}

/**
 * `key`'s counts on `db` once its stored requests reach `n`: the server's usage handed over once, the front's until
 * then (bounded: lines reach the log after the answer).
 */
export function storedWhen(db: PortalDatabase, server: Usage, front: Usage) {
  return async (key: string, n: number): Promise<Counts> => {
    await server.flush();
    for (let deadline = Date.now() + 10_000; Date.now() < deadline;) {
      await front.flush();
      const c = await countsOnDay(db, [key], Date.now());
      if (c.ok + c.not_modified + c.client_error + c.limited >= n) return c;
      await new Promise((r) => setImmediate(r));
    }
    return countsOnDay(db, [key], Date.now());
  };
}
