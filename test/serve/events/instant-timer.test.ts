// The event hub's timer (src/serve/events/instant-timer.ts): never fires before its instant, waits in parts, waits
// for a clock that does not move with time on that clock's own timers, and on the real clock fires within a
// millisecond or two of the instant rather than node's up to one late.
import { describe, expect, it } from "vitest";
import { createInstantTimer } from "../../../src/serve/events/instant-timer.ts";
import type { Scheduler } from "../../../src/serve/events/instant-timer.ts";

/** A clock in ms that moves only when told, and timers on it: `run` fires the soonest, with the clock at its time. */
function fakeTime(start: number) {
  const clock = { now: start };
  const due: { at: number; fn: () => void; id: number }[] = [];
  let id = 0;
  const scheduler: Scheduler = {
    setTimeout(fn, ms) {
      due.push({ at: clock.now + ms, fn, id: ++id });
      return id;
    },
    clearTimeout(handle) {
      const i = due.findIndex((d) => d.id === handle);
      if (i >= 0) due.splice(i, 1);
    },
  };
  return {
    clock,
    scheduler,
    /** The waits asked for so far, ms. */
    pending: () => due.map((d) => d.at - clock.now),
    run(): void {
      due.sort((a, b) => a.at - b.at);
      const next = due.shift()!;
      clock.now = Math.max(clock.now, next.at);
      next.fn();
    },
  };
}

/** A timer on `t`'s clock and timers, and the clock's readings when it fired. */
function timerOn(t: ReturnType<typeof fakeTime>, precise: () => boolean = () => true) {
  const fired: number[] = [];
  const reads = { count: 0 };
  const timer = createInstantTimer(
    () => (reads.count++, t.clock.now),
    t.scheduler,
    () => fired.push(t.clock.now),
    precise,
  );
  return { timer, fired, reads };
}

describe("createInstantTimer", () => {
  it("arms early, and on a clock that does not move waits for the instant on that clock's timers", () => {
    const t = fakeTime(1_000_000);
    const { timer, fired } = timerOn(t);
    timer.at(1_005_000);
    expect(timer.armed).toBe(true);
    expect(t.pending()).toEqual([4_998]);
    t.run(); // 2 ms before the instant: it does not fire
    expect(fired).toEqual([]);
    expect(t.pending()).toEqual([2]);
    t.run();
    expect(fired).toEqual([1_005_000]);
    expect(timer.armed).toBe(false);
  });

  it("holds the thread for the last 2 ms only while precision is asked for (streams open); else waits on timers", () => {
    for (const precise of [true, false]) {
      const t = fakeTime(1_000_000);
      const { timer, fired, reads } = timerOn(t, () => precise);
      timer.at(1_005_000);
      // 2 ms before the instant, on a clock that does not move with time: precise, the thread waits for it, watching
      // the clock (and gives up 1 ms past the 2); not, it reads the clock once and goes straight back to the timers.
      // Both then wait the 2 ms on them.
      reads.count = 0;
      const started = performance.now();
      t.run();
      const held = performance.now() - started;
      if (precise) expect(held).toBeGreaterThanOrEqual(2.5);
      if (precise) expect(reads.count).toBeGreaterThan(1);
      else expect(reads.count).toBe(1);
      expect(t.pending()).toEqual([2]);
      t.run();
      expect(fired).toEqual([1_005_000]);
    }
  });

  it("waits in parts for a far instant, fires once, and forgets an instant set again or cleared", () => {
    const t = fakeTime(0);
    const { timer, fired } = timerOn(t);
    timer.at(5 * 3_600_000);
    expect(t.pending()).toEqual([3_600_000]);
    for (let i = 0; i < 6 && fired.length === 0; i++) t.run();
    expect(fired).toEqual([5 * 3_600_000]);
    timer.at(fired[0]! + 10_000);
    timer.at(fired[0]! + 20_000); // instead of the one before
    expect(t.pending().length).toBe(1);
    timer.clear();
    expect(t.pending()).toEqual([]);
    expect(timer.armed).toBe(false);
  });

  it("on the real clock never fires before the instant, and fires close to it", async () => {
    const late: number[] = [];
    for (let i = 0; i < 7; i++) {
      const instant = Date.now() + 20;
      const at = await new Promise<number>((resolve) => {
        createInstantTimer(Date.now, { setTimeout, clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) }, () =>
          resolve(performance.timeOrigin + performance.now()),
        ).at(instant);
      });
      expect(Date.now()).toBeGreaterThanOrEqual(instant);
      late.push(at - instant);
    }
    // Never before the instant. How close after it is the events benchmark's figure (0.5-1 ms for node's own timer,
    // under 0.5 ms for this one on a quiet machine), not a test's: with the other test files busy on both cores the
    // median was 1.8 ms once. The bound here catches a wait that goes wrong (a lead not waited out, a part too long).
    late.sort((a, b) => a - b);
    expect(late[0]).toBeGreaterThanOrEqual(-0.01);
    expect(late[3]).toBeLessThan(25);
  });
});
