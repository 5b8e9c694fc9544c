// The calendar feeds of the snapshot served: a feed path's representation at an instant (from its two sale lists),
// and the feeds rendered (and gzipped) ahead of their requests, so that no request pays for a rendering (80-100 ms at
// 100,000 sample products, found by npm run fuzz:worst).
//
// Ahead means: when a snapshot is loaded, every feed in force then and in its next state; then, a little after each
// instant at which a feed changes (SETTLE_MS, or half the time to the change after), every feed's state after its
// next change. So each state is rendered once, before it comes into force (but those in force at load), never at an
// instant (when the event streams and the polling clients are busiest), one feed a turn of the event loop; at most
// two states a feed are kept for it, within the 32 feeds calendar.ts keeps.
import { ENDPOINTS } from "../../api/endpoints.ts";
import { endpointPath } from "../../api/routing.ts";
import { STORES } from "../../catalog/schema.ts";
import { notFound } from "../../errors.ts";
import type { LoadedSnapshot } from "../../snapshot/load.ts";
import { calendarLists, createCalendars } from "./calendar.ts";
import type { Scheduler } from "../events/hub.ts";
import { Missing } from "../bodies/response-body.ts";
import type { Representation, Resources } from "../bodies/response-body.ts";

/** Every calendar feed's path: the all-store one and each store's. */
const FEED_PATHS = ENDPOINTS.filter((e) => e.answer === "calendar").flatMap((e) =>
  e.params?.store ? STORES.map((store) => endpointPath(e.id, { store })) : [endpointPath(e.id)],
);
/** How long after a feed's change its following state is rendered, at most (less when the next change is sooner). */
const SETTLE_MS = 5_000;
/** Longest single wait for a change (node's timers take at most 2^31-1 ms). */
const MAX_WAIT_MS = 3_600_000;

const NODE_TIMERS: Scheduler = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface CalendarFeedOptions {
  /** The feeds' REFRESH-INTERVAL, seconds (the lists' max-age). */
  refreshSeconds: number;
  /** The handler's clock, epoch ms. */
  clock: () => number;
  /** Timers for rendering ahead. Default node's, unref'd. */
  scheduler?: Scheduler | undefined;
}

/** Creates the feeds: `at` answers a request, `warm` follows the snapshot (and its resources) served. */
export function createCalendarFeeds(o: CalendarFeedOptions) {
  const calendars = createCalendars();

  /** The feed at `path` at `now` (epoch s) for `affid`, and when it next changes; throws a 404 when a list is missing. */
  const at = (r: Resources, snapshot: LoadedSnapshot, path: string, affid: string, now: number) => {
    const paths = calendarLists(path);
    const [active, upcoming] = [paths.active, paths.upcoming].map((p) => r.at(p, r.statesOf(p), now));
    if (active instanceof Missing || upcoming instanceof Missing || !active || !upcoming) throw notFound();
    const changes = [active.changesAt, upcoming.changesAt].filter((c) => c !== null);
    const rep: Representation = calendars.represent(
      { active: active.body, upcoming: upcoming.body },
      { store: paths.store, affid, builtAt: snapshot.manifest.built_at, refreshSeconds: o.refreshSeconds },
    );
    return { rep, changesAt: changes.length ? Math.min(...changes) : null };
  };

  const w: Warming = {
    clock: o.clock,
    timers: o.scheduler ?? NODE_TIMERS,
    at,
    timer: null,
    generation: 0,
    rendering: 0,
    waiting: [],
  };

  return {
    at,
    /**
     * GET /v1/sales/[<store>/]upcoming.ics at `nowMs` (epoch ms): the feed, and its max-age (the lists' own: never past
     * the instant the feed changes).
     */
    answer(r: Resources, snapshot: LoadedSnapshot, path: string, affid: string, nowMs: number) {
      const { rep, changesAt } = at(r, snapshot, path, affid, Math.floor(nowMs / 1000));
      const left = changesAt === null ? Infinity : Math.floor((changesAt * 1000 - nowMs) / 1000);
      return { rep, ttl: Math.max(0, Math.min(o.refreshSeconds, left)) };
    },
    /** Renders, ahead of their requests, the feeds of `snapshot` in force now and in their next state, and so on. */
    warm(r: Resources, snapshot: LoadedSnapshot): void {
      w.generation++;
      if (w.timer !== null) w.timers.clearTimeout(w.timer);
      w.timer = null;
      const now = Math.floor(w.clock() / 1000);
      const due: [string, number][] = [];
      for (const path of FEED_PATHS) {
        due.push([path, now]);
        const next = changeAfter(r, path, now);
        if (next !== null) due.push([path, next]);
      }
      renderAhead(w, r, snapshot, due);
      arm(w, r, snapshot, now);
    },
    stats: () => calendars.stats(),
    /** Resolves once no feed is queued for rendering. */
    idle: (): Promise<void> => (w.rendering === 0 ? Promise.resolve() : new Promise((done) => w.waiting.push(done))),
  };
}

/** What the rendering ahead shares: its clock and timers, the feeds' `at`, and where it is. */
interface Warming {
  readonly clock: () => number;
  readonly timers: Scheduler;
  readonly at: (
    r: Resources,
    snapshot: LoadedSnapshot,
    path: string,
    affid: string,
    now: number,
  ) => { rep: Representation; changesAt: number | null };
  /** The wait for the next change, if any. */
  timer: unknown;
  /** Bumped by each `warm`: the renderings queued for an older snapshot are dropped. */
  generation: number;
  /** Renderings queued or running, and who waits for there to be none. */
  rendering: number;
  readonly waiting: (() => void)[];
}

/**
 * When the feed at `path` changes after `now`, or null (never, or it has no lists): from the lists' time segments,
 * without composing them (resources.at would, and the warming does, a turn at a time).
 */
function changeAfter(r: Resources, path: string, now: number): number | null {
  const paths = calendarLists(path);
  let change = Infinity;
  for (const list of [paths.active, paths.upcoming]) {
    let segments;
    try {
      segments = r.statesOf(list);
    } catch {
      continue; // no such list: its feed is a 404
    }
    for (const s of segments) {
      const edge = s.from !== null && s.from > now ? s.from : s.to !== null && s.to > now ? s.to : null;
      if (edge !== null) change = Math.min(change, edge);
    }
  }
  return change === Infinity ? null : change;
}

/** Renders the feeds at `due` ([path, instant]), one a turn, unless a newer snapshot came meanwhile. */
function renderAhead(w: Warming, r: Resources, snapshot: LoadedSnapshot, due: [string, number][]): void {
  const mine = w.generation;
  w.rendering++;
  const next = () => {
    const item = due.shift();
    if (!item || mine !== w.generation) {
      if (--w.rendering === 0) for (const done of w.waiting.splice(0)) done();
      return;
    }
    try {
      w.at(r, snapshot, item[0], "", item[1]).rep.gzip?.(); // rendered, and gzipped as most calendar apps ask
    } catch {
      // A feed with no lists then: its requests are 404s, nothing to render.
    }
    setImmediate(next);
  };
  setImmediate(next);
}

/** Waits for the soonest change of any feed after `now`, then renders each changed feed's following state. */
function arm(w: Warming, r: Resources, snapshot: LoadedSnapshot, now: number): void {
  const changes = FEED_PATHS.map((p) => changeAfter(r, p, now)).filter((c) => c !== null);
  if (changes.length === 0) return;
  const change = Math.min(...changes);
  const following = Math.min(...FEED_PATHS.map((p) => changeAfter(r, p, change) ?? Infinity));
  wait(w, r, snapshot, change * 1000 + Math.min(SETTLE_MS, ((following - change) * 1000) / 2));
}

/** Waits until `target` (epoch ms; in parts when it is far), then renders what follows the change before it. */
function wait(w: Warming, r: Resources, snapshot: LoadedSnapshot, target: number): void {
  const mine = w.generation;
  w.timer = w.timers.setTimeout(
    () => {
      w.timer = null;
      if (mine !== w.generation) return;
      if (w.clock() < target) return wait(w, r, snapshot, target); // a long wait's next part
      const t = Math.floor(w.clock() / 1000);
      const due: [string, number][] = [];
      for (const path of FEED_PATHS) {
        const next = changeAfter(r, path, t);
        if (next !== null) due.push([path, next]);
      }
      renderAhead(w, r, snapshot, due);
      arm(w, r, snapshot, t);
    },
    Math.min(MAX_WAIT_MS, Math.max(0, target - w.clock())),
  );
}
