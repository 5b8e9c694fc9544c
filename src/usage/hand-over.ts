// The API server's side of usage per key: the meter the handler counts into, its hand-over to the store every few
// seconds (off the request path), and the figures GET /v1/usage.json reads back, cached briefly per key.
import { randomUUID } from "node:crypto";
import type { PortalDatabase } from "../portal/db/database.ts";
import { openDatabase } from "../portal/db/database.ts";
import { migrate } from "../portal/db/migrations.ts";
import { Meter } from "./meter.ts";
import type { Counts } from "./store.ts";
import { countsBetween, countsOnDay, DAY_MS, HOUR_MS, MINUTE_MS, pruneUsage, recordBatch } from "./store.ts";

/** Figures of one key, as of the last hand-over of every server. */
export interface UsageFigures {
  /** Since 00:00 UTC today. */
  today: Counts & { since: number };
  /** The last 60 whole minutes and the current one. */
  lastHour: Counts & { since: number };
}

export interface UsageOptions {
  /** The store: a PostgreSQL URL or a SQLite file (the portal's database). */
  databaseUrl: string;
  /** How often counts are handed over (ms). */
  flushMs: number;
  /** The most rows (a key's minute) kept while the store cannot be reached; past it the oldest minutes are dropped. */
  maxRows: number;
  /** How long a key's figures are reused by GET /v1/usage.json (ms). */
  figuresTtlMs: number;
  /** Epoch ms. */
  now: () => number;
  /** The store could not be reached (once per outage), and it answers again. */
  onUnavailable?: (err: unknown) => void;
  onAvailable?: () => void;
}

export interface Usage {
  readonly meter: Meter;
  /** A key's figures from the store, reused for `figuresTtlMs`; null when the store cannot be reached. */
  figures(key: string): Promise<UsageFigures | null>;
  /** Hands over what was counted now (and what an earlier hand-over could not). */
  flush(): Promise<void>;
  /** Stops the timer and hands over the last counts (a graceful stop); resolves when done or given up. */
  close(): Promise<void>;
  /** For the metrics: rows waiting, requests dropped past the bound, hand-overs done and failed. */
  stats(): { rows: number; dropped: number; batches: number; failures: number };
}

/** Figures cached per key at most (emptied when full): a flood of keys cannot grow it. */
const FIGURES_MAX = 10_000;

export function startUsage(options: UsageOptions): Usage {
  const meter = new Meter(randomUUID(), options.maxRows);
  let db: Promise<PortalDatabase> | null = null;
  /** The store, opened (and migrated) on first use and again after a failure to open. */
  const store = (): Promise<PortalDatabase> => {
    if (!db) {
      db = openDatabase(options.databaseUrl).then(async (opened) => {
        try {
          await migrate(opened, options.now());
          return opened;
        } catch (err) {
          await opened.close().catch(() => {});
          throw err;
        }
      });
      db.catch(() => (db = null));
    }
    return db;
  };
  let available = true;
  let batches = 0;
  let failures = 0;
  let prunedAt = 0;
  const failed = (err: unknown) => {
    failures++;
    if (available) options.onUnavailable?.(err);
    available = false;
  };

  let running: Promise<void> | null = null;
  const handOver = async () => {
    // At most the batch an earlier attempt could not hand over, then one with everything counted since.
    for (let i = 0; i < 2; i++) {
      const batch = meter.take();
      if (!batch) return;
      const opened = await store();
      await recordBatch(opened, batch, options.now());
      meter.acknowledge(batch);
      batches++;
      if (!available) options.onAvailable?.();
      available = true;
    }
    const now = options.now();
    if (now - prunedAt >= HOUR_MS) {
      prunedAt = now;
      await pruneUsage(await store(), now);
    }
  };
  const flush = (): Promise<void> => {
    running ??= handOver()
      .catch(failed)
      .finally(() => (running = null));
    return running;
  };
  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  const cached = new Map<string, { at: number; figures: Promise<UsageFigures | null> }>();
  const read = async (key: string, now: number): Promise<UsageFigures | null> => {
    try {
      const opened = await store();
      const day = now - (now % DAY_MS);
      const hour = now - (now % MINUTE_MS) - HOUR_MS;
      const [today, lastHour] = await Promise.all([
        countsOnDay(opened, [key], now),
        countsBetween(opened, [key], hour, now + MINUTE_MS),
      ]);
      return { today: { ...today, since: day }, lastHour: { ...lastHour, since: hour } };
    } catch {
      return null;
    }
  };

  return {
    meter,
    figures(key) {
      const now = options.now();
      const hit = cached.get(key);
      if (hit && now - hit.at < options.figuresTtlMs) return hit.figures;
      if (cached.size >= FIGURES_MAX) cached.clear();
      const figures = read(key, now);
      cached.set(key, { at: now, figures });
      return figures;
    },
    flush,
    async close() {
      clearInterval(timer);
      await running;
      await flush();
      if (db) await (await db.catch(() => null))?.close();
    },
    stats: () => ({ rows: meter.rows, dropped: meter.dropped, batches, failures }),
  };
}
