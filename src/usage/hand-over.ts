// The API server's side of usage per key: the meter the handler counts into, its hand-over to the store every few
// seconds (off the request path, the database itself in a worker thread: store-thread.ts), and the figures GET
// /v1/usage.json reads back, cached briefly per key.
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { Meter } from "./meter.ts";
import type { Counts } from "./store.ts";
import { HOUR_MS } from "./store.ts";
import type { StoreRequest } from "./store-thread.ts";

/** A span's counts of one key: from `since`, all together and by route class (those with requests, in no order). */
export type SpanFigures = Counts & { since: number; routes: [string, Counts][] };

/** Figures of one key, as of the last hand-over of every server. */
export interface UsageFigures {
  /** Since 00:00 UTC today. */
  today: SpanFigures;
  /** The last 60 whole minutes and the current one. */
  lastHour: SpanFigures;
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
  /**
   * A key's figures from the store, reused for `figuresTtlMs` (and for one period more while newer ones are read);
   * null when the store cannot be reached.
   */
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

/** A request to the store thread, less its ID. */
type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;
type Ask = WithoutId<StoreRequest>;

/** The worker's source: registers tsx's loader in the thread (execArgv's --import does not reach workers), then runs it. */
function storeThreadSource(): string {
  const tsx = join(dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist/esm/api/index.mjs");
  const entry = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), "store-thread.ts")).href;
  return `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
}

/** The store thread, started on first use and again after it ended; `ask` resolves with its answer or rejects. */
function storeThread(databaseUrl: string) {
  let worker: Worker | null = null;
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const start = (): Worker => {
    const w = new Worker(storeThreadSource(), { eval: true, workerData: { databaseUrl } });
    w.unref(); // a server that stops is not kept alive by it (close() hands over first)
    w.on("message", (m: { id: number; ok: boolean; result?: unknown; error?: { name: string; message: string } }) => {
      const p = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.ok) p?.resolve(m.result);
      else p?.reject(Object.assign(new Error(m.error?.message ?? "usage store failed"), { name: m.error?.name }));
    });
    const end = (err: Error) => {
      if (worker === w) worker = null;
      for (const p of waiting.values()) p.reject(err);
      waiting.clear();
    };
    w.on("error", end);
    w.on("exit", (code) => end(new Error(`the usage store thread exited (${code})`)));
    return w;
  };
  return {
    ask<T>(req: Ask): Promise<T> {
      worker ??= start();
      const id = ++next;
      const w = worker;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        w.postMessage({ ...req, id });
      });
    },
    async close(): Promise<void> {
      if (!worker) return;
      await this.ask({ op: "close" }).catch(() => {});
      await worker?.terminate();
      worker = null;
    },
  };
}

export function startUsage(options: UsageOptions): Usage {
  const meter = new Meter(randomUUID(), options.maxRows);
  const thread = storeThread(options.databaseUrl);
  // Started now, so that the first GET /v1/usage.json does not wait for the thread to load (about 280 ms here); a
  // store that cannot be opened yet is opened again on first use. (The wall clock: it only dates the migrations.)
  thread.ask({ op: "open", now: Date.now() }).catch(() => {});
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
      await thread.ask({ op: "record", batch, now: options.now() });
      meter.acknowledge(batch);
      batches++;
      if (!available) options.onAvailable?.();
      available = true;
    }
    const now = options.now();
    if (now - prunedAt >= HOUR_MS) {
      prunedAt = now;
      await thread.ask({ op: "prune", now });
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

  /** A key's figures as read at `at`; `value` once the read is done, `next` while a newer read runs. */
  interface Cached {
    at: number;
    figures: Promise<UsageFigures | null>;
    value?: UsageFigures | null;
    next?: Promise<void>;
  }
  const cached = new Map<string, Cached>();
  const read = (key: string, now: number): Cached => {
    const entry: Cached = {
      at: now,
      figures: thread.ask<UsageFigures>({ op: "figures", key, now }).catch(() => null),
    };
    void entry.figures.then((value) => (entry.value = value));
    return entry;
  };
  const remember = (key: string, entry: Cached) => {
    if (cached.size >= FIGURES_MAX && !cached.has(key)) cached.clear();
    cached.set(key, entry);
    return entry;
  };

  return {
    meter,
    figures(key) {
      const now = options.now();
      const hit = cached.get(key);
      if (hit && now - hit.at < options.figuresTtlMs) return hit.figures;
      // Just expired (within one more period) and read: answered with them while one read brings the new ones, so
      // that no request waits for the store (its reads queue behind hand-overs). Older, or never read: waited for.
      if (hit?.value && now - hit.at < 2 * options.figuresTtlMs) {
        hit.next ??= (async () => {
          const entry = read(key, now);
          await entry.figures;
          if (cached.get(key) === hit) remember(key, entry);
        })();
        return Promise.resolve(hit.value);
      }
      return remember(key, read(key, now)).figures;
    },
    flush,
    async close() {
      clearInterval(timer);
      await running;
      await flush();
      await thread.close();
    },
    stats: () => ({ rows: meter.rows, dropped: meter.dropped, batches, failures }),
  };
}
