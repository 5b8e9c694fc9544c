// Writing one batch to every open stream, group by group, without holding the event loop longer than the batch may:
// in slices of at most its `sliceMs`, the rest after the I/O that waited (requests of other clients, new streams).
//
// Why: a write to a socket costs node 6-9 us here (most of it the kernel's), so a batch for 10,000 streams holds the
// process 60-90 ms, and every request that comes meanwhile waits that long. A heartbeat, which has no hurry, goes out
// in 4 ms slices (the events benchmark: clients polling the sale list had a p99 of 60-110 ms with heartbeats at a
// stretch, 3 ms in slices). An event goes out at a stretch up to a longer bound: each yield also runs the completions
// of the writes before it (node's, one per write), which then delay the rest of the streams: in 4 ms slices an event
// reached the last of 10,000 streams 139 ms after its instant, at a stretch 87 ms. An event does not wait for a
// heartbeat still going out: it goes first, and the heartbeat resumes after it.
//
// Streams are grouped by what they are sent (the hub's groups: same affid and filters): a batch's bytes are made
// once per group (`render`), at the group's turn, and the same bytes are written to each of its streams by one
// `deliver` for every batch, events and heartbeats alike, so that the heartbeats keep that code warm (optimised)
// for the next instant.
//
// Invariants: urgent batches (events) go out in the order pushed, each before any heartbeat still going out; each
// batch to every stream open when it was pushed (a stream that opens later gets only later batches: what it missed
// before, resuming, it was sent on opening); a stream that closes meanwhile is skipped; the first slice is written
// at once.

/** A stream or a group as the fan-out sees it: the batch count when it opened (was made). */
export interface Joined {
  since: number;
}

/** Streams that are sent the same bytes. */
interface Group<S extends Joined> extends Joined {
  members: ReadonlySet<S>;
}

export interface FanOutOptions {
  /** Runs the next slice once pending I/O has run. Default setImmediate. */
  defer?: (fn: () => void) => void;
}

/** Streams written to between two looks at the clock. */
const CHECK_EVERY = 32;

interface Batch<S, G, B> {
  seq: number;
  sliceMs: number;
  urgent: boolean;
  render: (g: G) => B | null;
  /** Where it is: the groups left, and the members left of the group being written (null: between groups). */
  groups: Iterator<G>;
  members: Iterator<S> | null;
  bytes: B | null;
}

/**
 * The fan-out of `groups` (the map the hub keeps its groups of open streams in), each stream written to by `deliver`
 * with the bytes its group's `render` made for the batch.
 */
export function createFanOut<S extends Joined, G extends Group<S>, B>(
  groups: ReadonlyMap<unknown, G>,
  deliver: (s: S, bytes: B) => void,
  o: FanOutOptions = {},
) {
  const defer = o.defer ?? ((fn: () => void) => void setImmediate(fn));
  const queue: Batch<S, G, B>[] = [];
  let seq = 0;
  let running = false;
  let deferred = false;

  /** The first urgent batch pushed, else the first pushed. */
  const pick = () => queue.find((b) => b.urgent) ?? queue[0];

  const drain = (): void => {
    let batch = pick();
    if (batch === undefined) return;
    running = true;
    let until = performance.now() + batch.sliceMs;
    let n = 0;
    try {
      while (batch !== undefined) {
        for (;;) {
          if (batch.members === null) {
            const g = batch.groups.next();
            if (g.done) break;
            // A group made after the batch holds only streams that opened after it.
            if (g.value.since >= batch.seq) continue;
            batch.bytes = batch.render(g.value);
            if (batch.bytes !== null) batch.members = g.value.members.values();
            continue;
          }
          const m = batch.members.next();
          if (m.done) {
            batch.members = null;
            batch.bytes = null;
            continue;
          }
          if (m.value.since < batch.seq) deliver(m.value, batch.bytes!);
          if (++n % CHECK_EVERY === 0 && performance.now() >= until) return later();
        }
        queue.splice(queue.indexOf(batch), 1);
        batch = pick();
        if (batch !== undefined) until = Math.min(until, performance.now() + batch.sliceMs);
      }
    } finally {
      running = false;
    }
  };
  const later = () => {
    if (deferred) return;
    deferred = true;
    defer(() => {
      deferred = false;
      drain();
    });
  };

  return {
    /** The count of batches pushed so far: a stream (a group) made now sets its `since` to it. */
    get seq(): number {
      return seq;
    },
    /**
     * Writes a batch to every stream open now, in slices of at most `sliceMs`, the first at once (an urgent one at
     * once even while a heartbeat is going out, which waits for it); `render` gives a group's bytes, null for none.
     */
    push(render: (g: G) => B | null, sliceMs: number, urgent: boolean): void {
      queue.push({ seq: ++seq, sliceMs, urgent, render, groups: groups.values(), members: null, bytes: null });
      if (!running && (urgent || !deferred)) drain();
    },
    /** Forgets the batches not yet written (the streams are being ended). */
    clear(): void {
      queue.length = 0;
    },
  };
}
