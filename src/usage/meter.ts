// Usage per key, counted in memory on the request path: per key, minute and endpoint (the route class the metrics use),
// requests by status class and bytes sent. The hand-over (hand-over.ts) cuts what was counted into batches and hands
// them to the store (store.ts), off the path.
import { ROUTE_CLASSES } from "../api/endpoints.ts";
import type { RouteClass } from "../api/endpoints.ts";
import type { RouteIndex } from "../api/routing.ts";

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

/** Counts a route takes in a live row: the status classes, then the bytes. */
const PER_ROUTE = BYTES + 1;

/**
 * The name a replaced key's requests are counted (and logged) under while its grace period runs: its record's name and
 * this suffix, which no name in the keys file has (a name is letters, digits, `.`, `_` and `-`). The store adds their
 * counts to the key's and keeps their last use apart (store.ts).
 */
export const PREVIOUS_SUFFIX = ":previous";

/** One key's counts in one minute on one endpoint, as handed over. */
export interface UsageRow {
  /** The key's name in the keys file (never the key), with PREVIOUS_SUFFIX for a replaced key in its grace period. */
  key: string;
  /** The minute's start, epoch ms (UTC). */
  minute: number;
  /** The endpoint's route class (ROUTE_CLASSES). */
  route: RouteClass;
  /** Requests by status class (STATUS_CLASSES' order), then the bytes sent. */
  counts: number[];
  /** The key's last request counted in that minute (on any endpoint), epoch ms. */
  last: number;
}

/**
 * One key's counts in one minute as the request path keeps them: a fixed block per route class (ROUTE_CLASSES'
 * order) of the status classes and the bytes, made once a key and minute, so that counting a request is two
 * increments at an index and no allocation. A plain array copied from ZEROS: a Float64Array of this size has its
 * memory outside V8's heap (over 64 bytes), whose allocation made meter.count 3-5 times slower with 1,000 keys.
 */
interface LiveRow {
  key: string;
  minute: number;
  counts: number[];
  last: number;
}

const ZEROS: readonly number[] = Array<number>(ROUTE_CLASSES.length * PER_ROUTE).fill(0);

/** Rows handed over together: recorded by the store all at once or not at all, and never twice (by `id`). */
export interface UsageBatch {
  id: string;
  rows: UsageRow[];
}

const MINUTE_MS = 60_000;

/**
 * Counts requests per key, minute and endpoint. Memory grows with the keys in use, not with traffic: one row per key for the
 * current minute, one per key and earlier minute not yet handed over, and the batch being handed over. While the
 * store cannot be reached the earlier minutes accumulate; past `maxRows` the oldest are dropped (and counted in
 * `dropped`), so an outage longer than the bound loses its oldest minutes, never the process.
 */
export class Meter {
  /** Each key's row for the latest minute it was used in. */
  private live = new Map<string, LiveRow>();
  /** Rows of earlier minutes, oldest first, not yet in a batch. */
  private closed: LiveRow[] = [];
  private pending: UsageBatch | null = null;
  /** The row the last request was counted in, and its key: requests come in runs of one key (a client polling). */
  private lastKey = "";
  private lastRow: LiveRow | null = null;
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

  /**
   * Counts one request of key `key` (its name) on route class `route` (its index in ROUTE_CLASSES) answered `status`
   * with `bytes` at `nowMs`.
   */
  count(key: string, route: RouteIndex, status: number, bytes: number, nowMs: number): void {
    const minute = nowMs - (nowMs % MINUTE_MS);
    let row = key === this.lastKey && this.lastRow !== null ? this.lastRow : this.live.get(key);
    if (row === undefined || row.minute !== minute) {
      if (row !== undefined) this.close(row);
      row = { key, minute, counts: ZEROS.slice(), last: nowMs };
      this.live.set(key, row);
    }
    this.lastKey = key;
    this.lastRow = row;
    const at = route * PER_ROUTE;
    row.counts[at + classOf(status)]!++;
    row.counts[at + BYTES]! += bytes;
    row.last = nowMs;
  }

  private close(row: LiveRow): void {
    this.closed.push(row);
    // Checked when a row closes, so the request path pays for it once a key and minute.
    while (this.closed.length > 0 && this.closed.length + this.live.size > this.maxRows) this.drop();
  }

  private drop(): void {
    const row = this.closed.shift()!;
    for (let i = 0; i < row.counts.length; i++) if (i % PER_ROUTE !== BYTES) this.dropped += row.counts[i]!;
  }

  /** Rows counted and not handed over (a key's minute, or in the batch being handed over a key's minute and route). */
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
    const rows: UsageRow[] = [];
    for (const row of this.closed) split(row, rows);
    for (const row of this.live.values()) split(row, rows);
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

/** Adds a live row's routes that were used to `rows`, a row each. */
function split(row: LiveRow, rows: UsageRow[]): void {
  const { counts } = row;
  for (let r = 0, at = 0; r < ROUTE_CLASSES.length; r++, at += PER_ROUTE) {
    let used = false;
    for (let i = at; i < at + BYTES; i++) if (counts[i] !== 0) used = true;
    if (used)
      rows.push({
        key: row.key,
        minute: row.minute,
        route: ROUTE_CLASSES[r]!,
        counts: counts.slice(at, at + PER_ROUTE),
        last: row.last,
      });
  }
}
