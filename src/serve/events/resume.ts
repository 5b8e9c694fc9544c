// Writing a resuming stream what it missed (a cursor of replay.ts) as its client reads it: a chunk of events at a
// time while node takes them without holding them, then on 'drain', and a few chunks a turn of the event loop, so that
// what it missed (up to a day of sales, for each of thousands of clients reconnecting at once) is never held rendered
// in memory nor written in one long stretch. Batches that come meanwhile (events, heartbeats) are queued behind it,
// and written once it is done; a stream that has not read for a heartbeat's interval is dropped instead.
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Bytes } from "./frames.ts";
import type { Cursor, Replay } from "./replay.ts";
import type { SaleEvent } from "./schedule.ts";

/** Missed events rendered and written at a time; and such writes in one turn of the event loop, at most. */
const CHUNK = 32;
const CHUNKS_A_TURN = 8;
/** Batches queued behind a stream's missed events (events, heartbeats) before it is dropped as not reading. */
const QUEUED_MAX = 64;

/** A stream as this module sees it. */
export interface Resuming {
  res: ServerResponse;
  socket: Socket | null;
  /** While it resumes: where it is in what it missed; null once that is written (or never missed anything). */
  backlog: Cursor | null;
  /** While it resumes: the batches that came meanwhile, written after what it missed. */
  queued: Bytes[] | null;
  /** Since when (the clock's ms) what it missed waits for the client to read (null: not waiting). */
  waitingSince: number | null;
}

export interface ResumerOptions<S extends Resuming> {
  clock: () => number;
  replay: Replay;
  /** How long a resuming stream may go without reading before it is dropped, ms. */
  heartbeatMs: number;
  /** The frames of `events` that `s` wants (its filters and affid), sent now; null for none. */
  frames(s: S, events: readonly SaleEvent[]): Bytes | null;
  /** Writes to `s`; false once node holds what it could not write yet. */
  write(s: S, bytes: Bytes): boolean;
  /** Writes a batch as every other batch is written, once the stream has caught up. */
  deliver(s: S, bytes: Bytes): void;
  onDrop(): void;
}

export function createResumer<S extends Resuming>(o: ResumerOptions<S>) {
  let replaying = 0;

  /** Leaves what a stream missed unwritten from now on (it is being ended, or has written it all). */
  const stop = (s: S): void => {
    if (s.backlog === null) return;
    s.backlog = null;
    s.queued = null;
    replaying--;
  };

  const pump = (s: S): void => {
    s.waitingSince = null;
    for (let chunks = 0; chunks < CHUNKS_A_TURN; chunks++) {
      if (s.backlog === null || s.res.destroyed) return;
      const events = o.replay.take(s.backlog, CHUNK);
      if (events.length === 0) {
        const queued = s.queued!;
        stop(s);
        for (const bytes of queued) o.deliver(s, bytes);
        return;
      }
      const bytes = o.frames(s, events);
      if (bytes !== null && !o.write(s, bytes)) {
        s.waitingSince = o.clock();
        (s.socket ?? s.res).once("drain", () => pump(s));
        return;
      }
    }
    setImmediate(() => pump(s));
  };

  return {
    /** Starts writing `s` what it missed (its head is out). */
    start(s: S, missed: Cursor): void {
      s.backlog = missed;
      s.queued = [];
      replaying++;
      pump(s);
    },
    /** A batch for a stream still being written what it missed: kept for after it, or the stream dropped. */
    queue(s: S, bytes: Bytes): void {
      if (s.res.destroyed) return;
      const waited = s.waitingSince === null ? 0 : o.clock() - s.waitingSince;
      if (waited < o.heartbeatMs && s.queued!.length < QUEUED_MAX) {
        s.queued!.push(bytes);
        return;
      }
      o.onDrop();
      s.res.destroy();
    },
    stop,
    /** Streams being written what they missed now. */
    get replaying(): number {
      return replaying;
    },
  };
}
