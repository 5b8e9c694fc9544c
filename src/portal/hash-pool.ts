// The bounded pool the password hashes run in: jobs start while the memory they hold together stays within a budget
// (one job alone always may), later ones wait in a queue of bounded length, and a job past the queue is refused at
// once. So a burst of sign-ins holds at most the budget (or one larger hash) in hashes, and a few queued requests.

/** Thrown when the queue is full: the request is answered 503 with Retry-After, not kept waiting. */
export class HashingBusyError extends Error {
  /** Seconds after which a try again is likely to be taken. */
  readonly retryAfter: number;
  constructor(retryAfter: number) {
    super("too many password hashes at once: try again shortly");
    this.name = "HashingBusyError";
    this.retryAfter = retryAfter;
  }
}

/** The pool's bounds. */
export interface HashPoolOptions {
  /** Bytes that the running jobs may hold together (a job's cost is the memory its hash takes). */
  budget: number;
  /** Jobs that may wait for a start; one more is refused with HashingBusyError. */
  queue: number;
  /** The Retry-After of a refusal, seconds. */
  retryAfter: number;
}

/** Runs `work`, holding `cost` bytes of the budget while it runs; rejects with HashingBusyError when the queue is full. */
export type HashPool = <T>(cost: number, work: () => Promise<T>) => Promise<T>;

/**
 * Makes a pool. Jobs start in the order they came (a large job at the head of the queue holds back the smaller ones
 * behind it until it can start, so it is never starved); a job whose cost alone is over the budget runs by itself.
 */
export function createHashPool(options: HashPoolOptions): HashPool {
  let held = 0;
  let running = 0;
  const waiting: { cost: number; start: () => void }[] = [];

  const fits = (cost: number) => running === 0 || held + cost <= options.budget;
  const take = (cost: number) => {
    held += cost;
    running++;
  };
  const startWaiting = () => {
    while (waiting.length > 0 && fits(waiting[0]!.cost)) {
      const next = waiting.shift()!;
      take(next.cost); // counted now, before the next one is weighed
      next.start();
    }
  };

  return async <T>(cost: number, work: () => Promise<T>): Promise<T> => {
    if (waiting.length === 0 && fits(cost)) take(cost);
    else if (waiting.length >= options.queue) throw new HashingBusyError(options.retryAfter);
    else await new Promise<void>((start) => waiting.push({ cost, start }));
    try {
      return await work();
    } finally {
      held -= cost;
      running--;
      startWaiting();
    }
  };
}
