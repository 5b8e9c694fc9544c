// Pushes every change of a key to the fronts (EDGE_FRONTS), and says which front may hold a check for EDGE_KEY_HOLD:
// one whose every push since its last resync reached it (in step). A push that fails puts its front out of step (its
// checks held briefly, EDGE_KEY_TTL) until a resync, retried with backoff, reaches it. Each server process pushes
// what its own reloads find (a duplicate push, from another worker or replica, is harmless: a purge or ban twice).
import type { EdgeHolds } from "../serve/handler-types.ts";
import type { KeyRecord } from "../keys/keys-file.ts";
import type { KeyState } from "./front.ts";
import type { PushedFront } from "./fronts.ts";
import { endGraces, keyChanges, keyStatesOf, nextGraceEnd } from "./key-states.ts";

/** The first retry of a resync after a failure, and the longest wait between retries, ms. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 2_000;
/**
 * A change is pushed again this long after its first push: a check answered under the old keys just before the
 * reload may reach the front's cache after the first purge or ban. The second one removes it.
 */
const REPUSH_MS = 1_000;
/** The longest setTimeout node takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What the pusher says of a front's state. */
export interface EdgeEvent {
  event: "edge_front_out_of_step" | "edge_front_in_step";
  front: string;
  error?: unknown;
}

export interface FrontStatus {
  name: string;
  inStep: boolean;
  pushes: { ok: number; failed: number };
  resyncs: { ok: number; failed: number };
}

export interface EdgePusher extends EdgeHolds {
  /** The keys file's records as a reload found them: the changes are pushed (at start: every front resynced). */
  keysLoaded(records: readonly KeyRecord[]): void;
  status(): FrontStatus[];
  /** Resolves once nothing is being pushed, nor due to be pushed again (tests). */
  idle(): Promise<void>;
  /**
   * Stops pushing; first resyncs every front in step that remembers its checks (nginx), so that a server restarted
   * leaves no check held that it cannot reach (a crashed one does: docs/deploy.md).
   */
  close(): Promise<void>;
}

/** One front's pushes, in order, and whether it is in step. */
interface FrontRunner extends FrontStatus {
  front: PushedFront;
  queue: Promise<void>;
  resync(): void;
  push(changes: readonly KeyState[]): void;
  stop(): void;
}

/** What every front's runner shares: the pusher's event sink, its timers, and the valid keys for a resync. */
interface RunnerContext {
  onEvent?: (e: EdgeEvent) => void;
  later(ms: number, fn: () => void): ReturnType<typeof setTimeout>;
  valid(): KeyState[];
  stopped(): boolean;
}

/**
 * A front's runner: pushes and resyncs run one after another; a failure puts the front out of step (said once until
 * it is in step again) and retries a resync after RETRY_MIN_MS, doubling to RETRY_MAX_MS, until one reaches it.
 */
function createFrontRunner(front: PushedFront, c: RunnerContext): FrontRunner {
  let retry: ReturnType<typeof setTimeout> | null = null;
  let wait = RETRY_MIN_MS;
  let said = false;
  const outOfStep = (error: unknown) => {
    r.inStep = false;
    if (!said) c.onEvent?.({ event: "edge_front_out_of_step", front: front.name, error });
    said = true;
    if (retry === null && !c.stopped()) {
      retry = c.later(wait, () => ((retry = null), r.resync()));
      wait = Math.min(wait * 2, RETRY_MAX_MS);
    }
  };
  const r: FrontRunner = {
    front,
    name: front.name,
    inStep: false,
    pushes: { ok: 0, failed: 0 },
    resyncs: { ok: 0, failed: 0 },
    queue: Promise.resolve(),
    resync() {
      r.queue = r.queue.then(async () => {
        try {
          await front.resync(c.valid());
          r.resyncs.ok++;
          [wait, said, r.inStep] = [RETRY_MIN_MS, false, true];
          c.onEvent?.({ event: "edge_front_in_step", front: front.name });
        } catch (err) {
          r.resyncs.failed++;
          outOfStep(err);
        }
      });
    },
    push(changes) {
      r.queue = r.queue.then(async () => {
        if (!r.inStep) return; // its resync covers every change
        try {
          await front.push(changes);
          r.pushes.ok++;
        } catch (err) {
          r.pushes.failed++;
          outOfStep(err);
        }
      });
    },
    stop: () => void (retry && clearTimeout(retry)),
  };
  return r;
}

export function createEdgePusher(o: {
  fronts: readonly PushedFront[];
  keyLimit: { rate: number; burst: number };
  clock: () => number;
  onEvent?: (e: EdgeEvent) => void;
}): EdgePusher {
  let states: Map<string, KeyState> | null = null;
  let graceTimer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  /** Changes due to be pushed again (REPUSH_MS). */
  let repushes = 0;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => (timers.delete(t), fn()), ms);
    t.unref();
    timers.add(t);
    return t;
  };
  const context: RunnerContext = {
    ...(o.onEvent ? { onEvent: o.onEvent } : {}),
    later,
    valid: () => [...(states?.values() ?? [])].filter((s) => s.valid !== null),
    stopped: () => stopped,
  };
  const fronts = new Map(o.fronts.map((front) => [front.name, createFrontRunner(front, context)]));
  const push = (changes: readonly KeyState[], again: boolean) => {
    if (changes.length === 0) return;
    for (const f of fronts.values()) f.push(changes);
    if (!again && !stopped) {
      repushes++;
      later(REPUSH_MS, () => (repushes--, push(changes, true)));
    }
  };
  const update = (next: Map<string, KeyState>) => {
    const before = states;
    states = next;
    if (before) push(keyChanges(before, next), false);
    else for (const f of fronts.values()) f.resync();
    scheduleGraceEnd();
  };
  const scheduleGraceEnd = () => {
    if (graceTimer) clearTimeout(graceTimer);
    graceTimer = null;
    const at = states ? nextGraceEnd(states, o.clock()) : Infinity;
    if (at === Infinity || stopped) return;
    graceTimer = setTimeout(() => update(endGraces(states!, o.clock())), Math.min(MAX_TIMER_MS, at - o.clock() + 1));
    graceTimer.unref();
  };

  return {
    keysLoaded(records) {
      update(keyStatesOf(records, o.clock(), o.keyLimit));
    },
    mayHold(front, hash, query) {
      const f = front === undefined ? undefined : fronts.get(front);
      if (!f?.inStep || !states?.has(hash)) return false;
      return f.front.remember ? f.front.remember(hash, query) : true;
    },
    status: () =>
      [...fronts.values()].map((f) => ({
        name: f.name,
        inStep: f.inStep,
        pushes: { ...f.pushes },
        resyncs: { ...f.resyncs },
      })),
    async idle() {
      do {
        while (repushes > 0) await new Promise((r) => setTimeout(r, 20));
        await Promise.all([...fronts.values()].map((f) => f.queue));
      } while (repushes > 0);
    },
    async close() {
      stopped = true;
      if (graceTimer) clearTimeout(graceTimer);
      for (const t of timers) clearTimeout(t);
      repushes = 0;
      for (const f of fronts.values()) f.stop();
      for (const f of fronts.values()) if (f.inStep && f.front.remember) f.resync();
      await Promise.all([...fronts.values()].map((f) => f.queue));
    },
  };
}
