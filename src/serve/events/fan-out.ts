// Writing one batch to every open stream without holding the event loop longer than the batch may: in slices of at
// most its `sliceMs`, the rest after the I/O that waited (requests of other clients, new streams) has run.
//
// Why: a write to a socket costs node 7-17 us here (most of it the kernel's), so a batch for 10,000 streams holds the
// process 70-170 ms, and every request that comes meanwhile waits that long. A heartbeat, which has no hurry, goes out
// in 4 ms slices (the events benchmark: clients polling the sale list had a p99 of 60-110 ms with heartbeats at a
// stretch, 3 ms in slices). An event goes out at a stretch up to a longer bound: each yield also runs the completions
// of the writes before it (node's, one per write), which then delay the rest of the streams: in 4 ms slices an event
// reached the last of 10,000 streams 139 ms after its instant, at a stretch 87 ms.
//
// Invariants: batches go out in the order pushed, each to every stream open when it was pushed (a stream that opens
// later gets only later batches: what it missed before, resuming, it was sent on opening), a stream that closes
// meanwhile is skipped; the first slice is written at once.

/** A stream as the fan-out sees it: the batch count when it opened. */
export interface Joined {
  since: number;
}

export interface FanOutOptions {
  /** Runs the next slice once pending I/O has run. Default setImmediate. */
  defer?: (fn: () => void) => void;
}

/** Streams written to between two looks at the clock. */
const CHECK_EVERY = 32;

/** The fan-out of `streams` (the set the hub adds and removes its open streams in). */
export function createFanOut<S extends Joined>(streams: ReadonlySet<S>, o: FanOutOptions = {}) {
  const defer = o.defer ?? ((fn: () => void) => void setImmediate(fn));
  const queue: { seq: number; sliceMs: number; deliver: (s: S) => void; rest: Iterator<S> }[] = [];
  let seq = 0;
  let draining = false;

  const drain = () => {
    const until = performance.now() + queue[0]!.sliceMs;
    let n = 0;
    while (queue.length > 0) {
      const batch = queue[0]!;
      for (let r = batch.rest.next(); !r.done; r = batch.rest.next()) {
        if (r.value.since < batch.seq) batch.deliver(r.value);
        if (++n % CHECK_EVERY === 0 && performance.now() >= until) return defer(resume);
      }
      queue.shift();
    }
    draining = false;
  };
  const resume = () => (queue.length > 0 ? drain() : void (draining = false));

  return {
    /** The count of batches pushed so far: a stream opening now sets its `since` to it. */
    get seq(): number {
      return seq;
    },
    /** Calls `deliver` for every stream open now, in slices of at most `sliceMs`; the first slice at once. */
    push(deliver: (s: S) => void, sliceMs: number): void {
      queue.push({ seq: ++seq, sliceMs, deliver, rest: streams.values() });
      if (draining) return;
      draining = true;
      drain();
    },
    /** Forgets the batches not yet written (the streams are being ended). */
    clear(): void {
      queue.length = 0;
    },
  };
}
