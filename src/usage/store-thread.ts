// The usage store's side of the hand-over, in a worker thread of the API server (started by hand-over.ts): it opens
// the database, records batches, prunes, and reads a key's figures. SQLite's driver runs each statement synchronously:
// on the server's own thread a hand-over of 10,000 keys held the event loop 100-150 ms (13 ms with a yield between
// statements); here it holds nothing the requests need.
import { parentPort, workerData } from "node:worker_threads";
import { describeError } from "../errors.ts";
import type { PortalDatabase } from "../db/database.ts";
import { openDatabase } from "../db/database.ts";
import { migrate } from "../db/migrations.ts";
import type { UsageFigures } from "./hand-over.ts";
import type { UsageBatch } from "./meter.ts";
import { countsBetween, countsBy, countsOnDay, DAY_MS, HOUR_MS, MINUTE_MS, pruneUsage, recordBatch } from "./store.ts";

/** What the server's thread asks; each answered by `{ id, ok, result }` or `{ id, ok: false, error }`. */
export type StoreRequest =
  | { id: number; op: "record"; batch: UsageBatch; now: number }
  | { id: number; op: "prune"; now: number }
  | { id: number; op: "figures"; key: string; now: number }
  | { id: number; op: "open"; now: number }
  | { id: number; op: "close" };

const { databaseUrl } = workerData as { databaseUrl: string };
let db: Promise<PortalDatabase> | null = null;

/** The store, opened (and migrated) on first use and again after a failure to open. */
function store(now: number): Promise<PortalDatabase> {
  if (!db) {
    db = openDatabase(databaseUrl).then(async (opened) => {
      try {
        await migrate(opened, now);
        return opened;
      } catch (err) {
        await opened.close().catch(() => {});
        throw err;
      }
    });
    db.catch(() => (db = null));
  }
  return db;
}

/** A key's counts today (UTC) and in the last hour, with the instants they start at, and by route class. */
async function figures(key: string, now: number): Promise<UsageFigures> {
  const opened = await store(now);
  const day = now - (now % DAY_MS);
  const hour = now - (now % MINUTE_MS) - HOUR_MS;
  const [today, lastHour, todayRoutes, lastHourRoutes] = await Promise.all([
    countsOnDay(opened, [key], now),
    countsBetween(opened, [key], hour, now + MINUTE_MS),
    countsBy(opened, "route", [key], DAY_MS, day, day + DAY_MS),
    countsBy(opened, "route", [key], MINUTE_MS, hour, now + MINUTE_MS),
  ]);
  return {
    today: { ...today, since: day, routes: [...todayRoutes] },
    lastHour: { ...lastHour, since: hour, routes: [...lastHourRoutes] },
  };
}

async function answer(req: StoreRequest): Promise<unknown> {
  switch (req.op) {
    case "record":
      return recordBatch(await store(req.now), req.batch, req.now);
    case "prune":
      return pruneUsage(await store(req.now), req.now);
    case "figures":
      return figures(req.key, req.now);
    case "open":
      return void (await store(req.now));
    case "close": {
      const opened = await db?.catch(() => null);
      db = null;
      return opened?.close();
    }
  }
}

parentPort!.on("message", (req: StoreRequest) => {
  answer(req).then(
    (result) => parentPort!.postMessage({ id: req.id, ok: true, result }),
    (err: unknown) => parentPort!.postMessage({ id: req.id, ok: false, error: describeError(err) }),
  );
});
