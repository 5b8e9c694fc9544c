// Usage per key, counted in memory on the request path: per key and minute, requests by status class and bytes sent.
// The shipper (shipper.ts) cuts what was counted into batches and hands them to the store (store.ts), off the path.

/** The status classes a partner's figures are split by, in the order of a row's counts. */
export const STATUS_CLASSES = ["ok", "not_modified", "client_error", "limited", "server_error"] as const;
/** Index of the bytes sent in a row's counts, after the status classes. */
export const BYTES = STATUS_CLASSES.length;

/** A status's class, as its index: 2xx (and any other below 400 but 304), 304, 4xx but 429, 429, 5xx. */
export function classOf(status: number): number {
  if (status < 400) return status === 304 ? 1 : 0;
  if (status < 500) return status === 429 ? 3 : 2;
  return 4;
}

/** One key's counts in one minute. */
export interface UsageRow {
  /** The key's name in the keys file (never the key). */
  key: string;
  /** The minute's start, epoch ms (UTC). */
  minute: number;
  /** Requests by status class (STATUS_CLASSES' order), then the bytes sent. */
  counts: number[];
  /** The last request counted, epoch ms. */
  last: number;
}

/** Rows handed over together: recorded by the store all at once or not at all, and never twice (by `id`). */
export interface UsageBatch {
  id: string;
  rows: UsageRow[];
}

const MINUTE_MS = 60_000;

/**
 * Counts requests per key and minute. Memory grows with the keys in use, not with traffic: one row per key for the
 * current minute, one per key and earlier minute not yet handed over, and the batch being handed over. While the
 * store cannot be reached the earlier minutes accumulate; past `maxRows` the oldest are dropped (and counted in
 * `dropped`), so an outage longer than the bound loses its oldest minutes, never the process.
 */
export class Meter {
  /** Each key's row for the latest minute it was used in. */
  private live = new Map<string, UsageRow>();
  /** Rows of earlier minutes, oldest first, not yet in a batch. */
  private closed: UsageRow[] = [];
  private pending: UsageBatch | null = null;
  /** The row the last request was counted in, and its key: requests come in runs of one key (a client polling). */
  private lastKey = "";
  private lastRow: UsageRow | null = null;
  private sequence = 0;
  /** Requests dropped past the bound, since the start. */
  dropped = 0;

  private readonly origin: string;
  private readonly maxRows: number;

  /**
   * @param origin names this process in batch IDs: unique per process start (a restarted server starts a new series).
   * @param maxRows the most rows kept besides the batch being handed over.
   */
  constructor(origin: string, maxRows: number) {
    this.origin = origin;
    this.maxRows = maxRows;
  }

  /** Counts one request of key `key` (its name) answered `status` with `bytes` at `nowMs`. */
  count(key: string, status: number, bytes: number, nowMs: number): void {
    const minute = nowMs - (nowMs % MINUTE_MS);
    let row = key === this.lastKey && this.lastRow !== null ? this.lastRow : this.live.get(key);
    if (row === undefined || row.minute !== minute) {
      if (row !== undefined) this.close(row);
      row = { key, minute, counts: [0, 0, 0, 0, 0, 0], last: nowMs };
      this.live.set(key, row);
    }
    this.lastKey = key;
    this.lastRow = row;
    row.counts[classOf(status)]!++;
    row.counts[BYTES]! += bytes;
    row.last = nowMs;
  }

  private close(row: UsageRow): void {
    this.closed.push(row);
    // Checked when a row closes, so the request path pays for it once a key and minute.
    while (this.closed.length > 0 && this.closed.length + this.live.size > this.maxRows) this.drop();
  }

  private drop(): void {
    const row = this.closed.shift()!;
    for (let i = 0; i < BYTES; i++) this.dropped += row.counts[i]!;
  }

  /** Rows counted and not handed over (the batch being handed over included). */
  get rows(): number {
    return this.live.size + this.closed.length + (this.pending?.rows.length ?? 0);
  }

  /**
   * The batch to hand over now: the one not yet acknowledged (the same ID and rows, to be sent again), else a new one
   * with everything counted so far; null when there is nothing.
   */
  take(): UsageBatch | null {
    if (this.pending) return this.pending;
    if (this.live.size === 0 && this.closed.length === 0) return null;
    const rows = this.closed;
    for (const row of this.live.values()) rows.push(row);
    this.closed = [];
    this.live = new Map();
    this.lastRow = null; // handed over with the rest: the next request starts a row of its own
    this.pending = { id: `${this.origin}:${++this.sequence}`, rows };
    return this.pending;
  }

  /** The batch `take` returned is in the store. */
  acknowledge(batch: UsageBatch): void {
    if (this.pending === batch) this.pending = null;
  }
}
