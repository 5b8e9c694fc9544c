// A timer for an instant on the clock, kept to the millisecond: node's timers fire on a millisecond of their own
// clock, up to 1 ms late (0.5-1.0 ms after a sale's instant in the events benchmark), so this one is armed
// TIMER_LEAD_MS early and waits for the instant exactly. It never fires before the instant.

/** Timers, injectable so that tests move them with their clock. */
export interface Scheduler {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** How long before its instant the timer is armed, ms. */
const TIMER_LEAD_MS = 2;
/** Longest single wait (node's timers take at most 2^31-1 ms); a longer one is waited in parts. */
const MAX_WAIT_MS = 3_600_000;
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/**
 * A timer that calls `fire` once `clock` (epoch ms) reaches the instant given to `at`. The last TIMER_LEAD_MS are
 * waited on the thread (the event loop held meanwhile) only while `precise()` says it matters (streams are open);
 * otherwise on node's timers, up to a millisecond late.
 */
export function createInstantTimer(
  clock: () => number,
  timers: Scheduler,
  fire: () => void,
  precise: () => boolean = () => true,
) {
  let handle: unknown = null;
  let due = 0;
  const set = (ms: number) => {
    handle = timers.setTimeout(onTimer, Math.min(MAX_WAIT_MS, Math.max(0, ms)));
  };
  const onTimer = () => {
    handle = null;
    const left = due - clock();
    if (left > TIMER_LEAD_MS) return set(left - TIMER_LEAD_MS); // early, or a wait in parts
    // A clock that does not move with time (tests' own) is waited for with its own timers.
    if (left > 0 && !(precise() && waitFor(clock, due, left))) return set(left);
    fire();
  };
  const clear = () => {
    if (handle !== null) timers.clearTimeout(handle);
    handle = null;
  };
  return {
    /** Calls `fire` at `instant` (epoch ms), not before, instead of at any instant set before. */
    at(instant: number): void {
      clear();
      due = instant;
      set(instant - clock() - TIMER_LEAD_MS);
    },
    clear,
    /** Whether an instant is set and has not come yet. */
    get armed(): boolean {
      return handle !== null;
    },
  };
}

/**
 * Waits until `clock` reaches `instant` (epoch ms), `left` ms (at most TIMER_LEAD_MS) away: sleeps to within a
 * millisecond of it, then watches the clock turn (its readings are whole ms). False if it has not reached it by
 * then (a clock that does not move with time).
 */
function waitFor(clock: () => number, instant: number, left: number): boolean {
  const until = performance.now() + left + 1;
  if (left > 1) Atomics.wait(SLEEPER, 0, 0, left - 1);
  while (clock() < instant) if (performance.now() >= until) return false;
  return true;
}
