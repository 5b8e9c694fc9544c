// Writing resuming streams what they missed (a cursor of replay.ts each) as their clients read them, all of them in
// turn within a bounded slice of each turn of the event loop: a chunk of events per stream and turn round, a stream
// whose client has not taken its last chunk left out until 'drain'. So what one stream missed (up to a day of sales)
// is never held rendered in memory, and ten thousand streams resuming at once (a server restart, a network blip)
// neither hold the event loop longer than SLICE_MS at a stretch nor keep other requests waiting behind them. Batches
// that come meanwhile (events, heartbeats) are queued behind what a stream missed, and written once it is done; a
// stream that has not read for a heartbeat's interval is dropped instead.
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Bytes } from "./frames.ts";
import type { Cursor, Replay } from "./replay.ts";
import type { SaleEvent } from "./schedule.ts";

/** Missed events rendered and written to a stream at a time. */
const CHUNK = 32;
/** Longest a turn of the event loop spends writing missed events, over every resuming stream, ms. */
const SLICE_MS = 4;
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
  /** Streams whose clients can take a chunk now, in turn: the next at the front, one just written to at the back. */
  const ready = new Set<S>();
  let scheduled = false;

  /** Leaves what a stream missed unwritten from now on (it is being ended, or has written it all). */
  const stop = (s: S): void => {
    if (s.backlog === null) return;
    s.backlog = null;
    s.queued = null;
    ready.delete(s);
    replaying--;
  };

  /** Writes the next chunk of what `s` missed, then puts it back in turn, or waits for its client, or finishes it. */
  const step = (s: S): void => {
    if (s.backlog === null || s.res.destroyed) return;
    const events = o.replay.take(s.backlog, CHUNK);
    if (events.length === 0) {
      const queued = s.queued!;
      stop(s);
      for (const bytes of queued) o.deliver(s, bytes);
      return;
    }
    const bytes = o.frames(s, events);
    if (bytes === null || o.write(s, bytes)) {
      ready.add(s);
      return;
    }
    s.waitingSince = o.clock();
    (s.socket ?? s.res).once("drain", () => {
      s.waitingSince = null;
      if (s.backlog === null) return;
      ready.add(s);
      schedule();
    });
  };

  /** One slice: a chunk to each ready stream in turn, round and round, until the slice is spent or none is ready. */
  const run = (): void => {
    scheduled = false;
    const until = performance.now() + SLICE_MS;
    while (ready.size > 0 && performance.now() < until) {
      const s = ready.values().next().value!;
      ready.delete(s);
      step(s);
    }
    schedule();
  };
  const schedule = (): void => {
    if (scheduled || ready.size === 0) return;
    scheduled = true;
    setImmediate(run);
  };

  return {
    /** Starts writing `s` what it missed (its head is out), in turn with the other resuming streams. */
    start(s: S, missed: Cursor): void {
      s.backlog = missed;
      s.queued = [];
      replaying++;
      ready.add(s);
      schedule();
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
