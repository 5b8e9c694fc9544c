// What a stream that resumes with Last-Event-ID missed, as a cursor over what the process holds rather than a copy:
// begins/ends from the snapshot's schedule (up to `replaySeconds` back), announced/updated from this process's log of
// its recent swaps (they exist only as swaps happen), with their bodies copied (their snapshot's packs may be closed
// by then), bounded by count and age. A stream resumes after the event its ID names, in stream order (compareEvents);
// an ID this process does not hold (another snapshot history, a swap it did not see) resumes from the second the ID
// names. A cursor holds four indices, whatever it has left to send, and is read a few events at a time (`take`), so
// that neither a resume from a day ago nor ten thousand of them at once costs memory per event per stream. A cursor
// holds until the next swap (`record`), which changes both lists: the hub ends the streams still replaying then.
import type { LoadedSnapshot } from "../../snapshot/load.ts";
import type { SaleBytes } from "./frames.ts";
import { compareEvents, firstAfter } from "./schedule.ts";
import type { SaleEvent, Schedule } from "./schedule.ts";

/** An event ID: `<pos>.<rank>.<16 characters of its hash>` (schedule.ts). */
const EVENT_ID = /^(\d{1,12})\.\d\.[A-Za-z0-9_-]{16}$/;

export interface ReplayOptions {
  /** How far back a stream resumes, seconds. */
  replaySeconds: number;
  /** Swap events kept (the oldest forgotten first). */
  maxSwapEvents: number;
}

/** Where a resuming stream is: the next and the end index in the schedule's events and in the swaps kept. */
export interface Cursor {
  events: readonly SaleEvent[];
  i: number;
  end: number;
  j: number;
  swapsEnd: number;
}

/** The index of the first of `list` (sorted by compareEvents) that comes after `e`, from `lo` on. */
function firstPast(list: readonly SaleEvent[], e: SaleEvent, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareEvents(list[mid]!, e) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The event of `list` (sorted) with ID `id` at second `pos`, if there is one. */
function findAt(list: readonly SaleEvent[], id: string, pos: number): SaleEvent | undefined {
  for (let k = firstAfter(list, pos - 1); k < list.length && list[k]!.pos === pos; k++)
    if (list[k]!.id === id) return list[k];
  return undefined;
}

export function createReplay(o: ReplayOptions) {
  /** Recent swaps' events, in the order sent. */
  const log: { event: SaleEvent; bytes: SaleBytes }[] = [];
  /** The same events in stream order, remade at each swap. */
  let swaps: SaleEvent[] = [];
  const bytesOf = new WeakMap<SaleEvent, SaleBytes>();

  return {
    /** A swap event's own copy of its sale's bytes (undefined for a begins/ends event: its snapshot has them). */
    bytes: (event: SaleEvent): SaleBytes | undefined => bytesOf.get(event),

    /**
     * Keeps a swap's events, their bytes copied from `snapshot`, and forgets those past the bounds at `now` (s). Every
     * cursor made before is void.
     */
    record(changes: readonly SaleEvent[], snapshot: LoadedSnapshot, now: number): void {
      for (const event of changes) {
        const { identity, links } = snapshot.bodies.get(event.body);
        const bytes = { identity, links };
        bytesOf.set(event, bytes);
        log.push({ event, bytes });
      }
      const since = now - o.replaySeconds;
      let drop = 0;
      while (drop < log.length && (log.length - drop > o.maxSwapEvents || log[drop]!.event.pos <= since)) drop++;
      if (drop > 0) log.splice(0, drop);
      // Sorted runs already (each swap's events, swaps in time order): the sort merges them.
      swaps = log.map((l) => l.event).sort(compareEvents);
    },

    /**
     * Where a stream resuming after `lastId` at `now` (s) starts: the events after it in stream order, at most
     * `replaySeconds` back; null when it missed none (or the ID is not one).
     */
    cursor(schedule: Schedule | null, lastId: string, now: number): Cursor | null {
      const m = EVENT_ID.exec(lastId);
      if (!m || !schedule) return null;
      const { events } = schedule;
      const since = now - o.replaySeconds;
      const pos = Number(m[1]);
      const end = firstAfter(events, now);
      const swapsEnd = firstAfter(swaps, now);
      let i = firstAfter(events, since);
      let j = firstAfter(swaps, since);
      const last = findAt(events, lastId, pos) ?? findAt(swaps, lastId, pos);
      if (last) {
        i = firstPast(events, last, i, Math.max(i, end));
        j = firstPast(swaps, last, j, Math.max(j, swapsEnd));
      } else {
        i = Math.max(i, firstAfter(events, pos));
        j = Math.max(j, firstAfter(swaps, pos));
      }
      return i < end || j < swapsEnd ? { events, i, end, j, swapsEnd } : null;
    },

    /** Up to `n` more of the cursor's events, in stream order (none: it has sent them all). */
    take(c: Cursor, n: number): SaleEvent[] {
      const out: SaleEvent[] = [];
      while (out.length < n && (c.i < c.end || c.j < c.swapsEnd)) {
        const a = c.i < c.end ? c.events[c.i]! : null;
        const b = c.j < c.swapsEnd ? swaps[c.j]! : null;
        if (b === null || (a !== null && compareEvents(a, b) < 0)) {
          out.push(a!);
          c.i++;
        } else {
          out.push(b);
          c.j++;
        }
      }
      return out;
    },

    /** Swap events kept now. */
    get size(): number {
      return log.length;
    },
  };
}

export type Replay = ReturnType<typeof createReplay>;
