// Usage per key in the portal's database (migrations 3, 4 and 8): batches from the API servers added to per-minute,
// per-hour and per-day figures by key and route class, each key's last use (a replaced key's apart while its grace
// runs), retention, and the reads the portal and GET /v1/usage.json make.
import type { PortalDatabase, Queries, Row, SqlValue } from "../db/database.ts";
import { BYTES, PREVIOUS_SUFFIX, STATUS_CLASSES } from "./meter.ts";
import type { UsageBatch, UsageRow } from "./meter.ts";

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/**
 * Per-minute and per-hour figures are kept this long, per-day figures 400 days; batch IDs a week (a batch is re-sent
 * within that).
 */
const MINUTES_KEPT_MS = 48 * HOUR_MS;
const DAYS_KEPT_MS = 400 * DAY_MS;
const BATCH_IDS_KEPT_MS = 7 * DAY_MS;

/** Rows per INSERT: 9 values each, well inside SQLite's and PostgreSQL's limits on parameters. */
const ROWS_PER_STATEMENT = 250;

/**
 * Lets the event loop run between two statements of a batch. SQLite's driver runs each statement synchronously (its
 * promise is settled when it is returned), so a batch of 10,000 keys would hold an API server's loop for 100-150 ms
 * here; this way it holds it for one statement (a few ms) at a time.
 */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const COLUMNS = [...STATUS_CLASSES, "bytes"] as const;

/** Requests by status class and bytes sent, over some span. */
export interface Counts {
  ok: number;
  not_modified: number;
  client_error: number;
  limited: number;
  server_error: number;
  bytes: number;
}

export const zeroCounts = (): Counts => ({
  ok: 0,
  not_modified: 0,
  client_error: 0,
  limited: 0,
  server_error: 0,
  bytes: 0,
});

/** All requests in `c`, whatever their status. */
export const requestsIn = (c: Counts): number => c.ok + c.not_modified + c.client_error + c.limited + c.server_error;

const countsOf = (row: Row): Counts => {
  const c = zeroCounts();
  for (const column of COLUMNS) c[column] = Number(row[column] ?? 0);
  return c;
};

/** The key a usage name (a row's key) counts for: a replaced key's requests are its record's (PREVIOUS_SUFFIX). */
const keyOfUsageName = (name: string) =>
  name.endsWith(PREVIOUS_SUFFIX) ? name.slice(0, -PREVIOUS_SUFFIX.length) : name;

/** Adds `rows` (merged by key, period `periodOf` and route) to `table`'s figures. */
async function addRows(
  tx: Queries,
  table: "usage_minute" | "usage_hour" | "usage_day",
  period: "minute" | "hour" | "day",
  rows: readonly UsageRow[],
  periodOf: (row: UsageRow) => number,
): Promise<void> {
  const merged = new Map<string, { key: string; at: number; route: string; counts: number[] }>();
  for (const [n, row] of rows.entries()) {
    if (n % ROWS_PER_STATEMENT === 0) await yieldToLoop();
    const at = periodOf(row);
    const key = keyOfUsageName(row.key);
    const id = `${key}\n${at}\n${row.route}`;
    const m = merged.get(id);
    if (!m) merged.set(id, { key, at, route: row.route, counts: [...row.counts] });
    else for (let i = 0; i <= BYTES; i++) m.counts[i]! += row.counts[i]!;
  }
  const all = [...merged.values()];
  const update = COLUMNS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(", ");
  for (let i = 0; i < all.length; i += ROWS_PER_STATEMENT) {
    const chunk = all.slice(i, i + ROWS_PER_STATEMENT);
    const params: SqlValue[] = [];
    for (const r of chunk) params.push(r.key, r.at, r.route, ...r.counts);
    await yieldToLoop();
    await tx.run(
      `INSERT INTO ${table} (key_name, ${period}, route, ${COLUMNS.join(", ")}) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}
       ON CONFLICT (key_name, ${period}, route) DO UPDATE SET ${update}`,
      params,
    );
  }
}

/**
 * Records a batch in one transaction: its ID first, so that a batch sent again (its acknowledgement was lost) adds
 * nothing. Returns false when the batch was already recorded. A replaced key's requests (PREVIOUS_SUFFIX) are added to
 * its record's figures; their last use is kept under their own name.
 */
export async function recordBatch(db: PortalDatabase, batch: UsageBatch, nowMs: number): Promise<boolean> {
  return db.transaction(async (tx) => {
    const fresh = await tx.run("INSERT INTO usage_batches (id, at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", [
      batch.id,
      nowMs,
    ]);
    if (fresh === 0) return false;
    await addRows(tx, "usage_minute", "minute", batch.rows, (r) => r.minute);
    await addRows(tx, "usage_hour", "hour", batch.rows, (r) => r.minute - (r.minute % HOUR_MS));
    await addRows(tx, "usage_day", "day", batch.rows, (r) => r.minute - (r.minute % DAY_MS));
    const last = new Map<string, number>();
    for (const r of batch.rows) last.set(r.key, Math.max(last.get(r.key) ?? 0, r.last));
    const entries = [...last];
    for (let i = 0; i < entries.length; i += ROWS_PER_STATEMENT) {
      const chunk = entries.slice(i, i + ROWS_PER_STATEMENT);
      await yieldToLoop();
      await tx.run(
        `INSERT INTO usage_last (key_name, at) VALUES ${chunk.map(() => "(?, ?)").join(", ")}
         ON CONFLICT (key_name) DO UPDATE SET at = CASE WHEN excluded.at > usage_last.at THEN excluded.at ELSE usage_last.at END`,
        chunk.flat(),
      );
    }
    return true;
  });
}

/** Removes figures past their retention (48 h of minutes, 400 days of days) and old batch IDs. */
export async function pruneUsage(db: PortalDatabase, nowMs: number): Promise<void> {
  await db.batch([
    { sql: "DELETE FROM usage_minute WHERE minute < ?", params: [nowMs - MINUTES_KEPT_MS] },
    { sql: "DELETE FROM usage_hour WHERE hour < ?", params: [nowMs - MINUTES_KEPT_MS] },
    { sql: "DELETE FROM usage_day WHERE day < ?", params: [nowMs - DAYS_KEPT_MS] },
    { sql: "DELETE FROM usage_batches WHERE at < ?", params: [nowMs - BATCH_IDS_KEPT_MS] },
  ]);
}

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");
const sums = COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(", ");

/** What figures are grouped by: the route class, or the key (its name in the keys file). */
export type Grouping = "route" | "key_name";

/**
 * The keys' counts from `fromMs` (inclusive) to `toMs` (exclusive) by route class or by key, from the per-minute
 * figures (`step` MINUTE_MS) or the per-day ones (DAY_MS); only the groups with figures.
 */
export async function countsBy(
  db: PortalDatabase,
  by: Grouping,
  keys: readonly string[],
  step: typeof MINUTE_MS | typeof DAY_MS,
  fromMs: number,
  toMs: number,
): Promise<Map<string, Counts>> {
  if (keys.length === 0) return new Map();
  const [table, column] = step === DAY_MS ? ["usage_day", "day"] : ["usage_minute", "minute"];
  const rows = await db.all(
    `SELECT ${by} AS grp, ${sums} FROM ${table}
     WHERE key_name IN (${placeholders(keys.length)}) AND ${column} >= ? AND ${column} < ? GROUP BY ${by}`,
    [...keys, fromMs, toMs],
  );
  return new Map(rows.map((r) => [String(r.grp), countsOf(r)]));
}

/** One period's counts of one key on one route class. */
export interface DetailRow {
  at: number;
  key: string;
  route: string;
  counts: Counts;
}

/**
 * The keys' counts per `step` (HOUR_MS from the minutes, DAY_MS from the days), key and route class from `fromMs` to
 * `toMs` (exclusive): only those with figures, by period (oldest first), key and route.
 */
export async function detailRows(
  db: PortalDatabase,
  keys: readonly string[],
  step: typeof HOUR_MS | typeof DAY_MS,
  fromMs: number,
  toMs: number,
): Promise<DetailRow[]> {
  if (keys.length === 0) return [];
  const start = fromMs - (fromMs % step);
  const [table, column] = step === HOUR_MS ? ["usage_minute", "minute"] : ["usage_day", "day"];
  const at = `${column} - (${column} % ${step})`;
  const rows = await db.all(
    `SELECT ${at} AS at, key_name, route, ${sums} FROM ${table}
     WHERE key_name IN (${placeholders(keys.length)}) AND ${column} >= ? AND ${column} < ?
     GROUP BY ${at}, key_name, route ORDER BY at, key_name, route`,
    [...keys, start, toMs],
  );
  return rows.map((r) => ({ at: Number(r.at), key: String(r.key_name), route: String(r.route), counts: countsOf(r) }));
}

/** The keys' counts together from minute `fromMs` (inclusive) to `toMs` (exclusive), from the per-minute figures. */
export async function countsBetween(
  db: PortalDatabase,
  keys: readonly string[],
  fromMs: number,
  toMs: number,
): Promise<Counts> {
  if (keys.length === 0) return zeroCounts();
  const row = (
    await db.all(
      `SELECT ${sums} FROM usage_minute WHERE key_name IN (${placeholders(keys.length)}) AND minute >= ? AND minute < ?`,
      [...keys, fromMs, toMs],
    )
  )[0];
  return row ? countsOf(row) : zeroCounts();
}

/** The keys' counts on the UTC day that holds `atMs`, from the per-day figures. */
export async function countsOnDay(db: PortalDatabase, keys: readonly string[], atMs: number): Promise<Counts> {
  if (keys.length === 0) return zeroCounts();
  const row = (
    await db.all(`SELECT ${sums} FROM usage_day WHERE key_name IN (${placeholders(keys.length)}) AND day = ?`, [
      ...keys,
      atMs - (atMs % DAY_MS),
    ])
  )[0];
  return row ? countsOf(row) : zeroCounts();
}

/** One period of a series: its start (epoch ms) and the counts in it. */
export interface Point {
  at: number;
  counts: Counts;
}

/**
 * The keys' counts per `step` (HOUR_MS from the minutes, DAY_MS from the days) from `fromMs` to `toMs` (exclusive),
 * every period present (zero when nothing was counted), oldest first.
 */
export async function series(
  db: PortalDatabase,
  keys: readonly string[],
  step: typeof HOUR_MS | typeof DAY_MS,
  fromMs: number,
  toMs: number,
): Promise<Point[]> {
  const start = fromMs - (fromMs % step);
  const points: Point[] = [];
  for (let at = start; at < toMs; at += step) points.push({ at, counts: zeroCounts() });
  if (keys.length === 0 || points.length === 0) return points;
  const [table, column] = step === HOUR_MS ? ["usage_minute", "minute"] : ["usage_day", "day"];
  const rows = await db.all(
    `SELECT ${column} - (${column} % ${step}) AS at, ${sums} FROM ${table}
     WHERE key_name IN (${placeholders(keys.length)}) AND ${column} >= ? AND ${column} < ?
     GROUP BY ${column} - (${column} % ${step})`,
    [...keys, start, toMs],
  );
  for (const row of rows) {
    const point = points[Math.round((Number(row.at) - start) / step)];
    if (point) point.counts = countsOf(row);
  }
  return points;
}

/**
 * Each name's last use (epoch ms), for the names that were ever used: a key's name for its requests with its current
 * key, with PREVIOUS_SUFFIX for those with the key it replaced (in its grace period).
 */
export async function lastUsed(db: PortalDatabase, keys: readonly string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const rows = await db.all(`SELECT key_name, at FROM usage_last WHERE key_name IN (${placeholders(keys.length)})`, [
    ...keys,
  ]);
  return new Map(rows.map((r) => [String(r.key_name), Number(r.at)]));
}

/**
 * The rows of a span's figures, as `(key_name, requests)`, and their parameters. HOUR_MS: exact to the minute, 48 h
 * back at most, read from the hours but for the part of the first hour inside the span, read from its minutes (an hour
 * is 60 rows a key there, 1 here); DAY_MS: whole UTC days, from the days.
 */
function spanRows(step: typeof HOUR_MS | typeof DAY_MS, fromMs: number, toMs: number): [string, SqlValue[]] {
  const requests = STATUS_CLASSES.join(" + ");
  if (step === DAY_MS)
    return [`SELECT key_name, ${requests} AS requests FROM usage_day WHERE day >= ? AND day < ?`, [fromMs, toMs]];
  const firstHour = fromMs - (fromMs % HOUR_MS) + (fromMs % HOUR_MS === 0 ? 0 : HOUR_MS);
  return [
    `SELECT key_name, ${requests} AS requests FROM usage_minute WHERE minute >= ? AND minute < ?
     UNION ALL
     SELECT key_name, ${requests} AS requests FROM usage_hour WHERE hour >= ? AND hour < ?`,
    [fromMs, Math.min(firstHour, toMs), firstHour, toMs],
  ];
}

/** An account and the requests its keys made in a span. */
export interface AccountTraffic {
  accountId: string;
  requests: number;
}

/**
 * A page of every account of the portal, busiest first (by the requests of all its keys, api_keys.file_name, from
 * `fromMs` to `toMs`, exact to the minute with HOUR_MS, whole days with DAY_MS: spanRows), then by email; accounts whose
 * keys made no request in the span come last, with 0.
 */
export async function accountsByTraffic(
  db: PortalDatabase,
  step: typeof HOUR_MS | typeof DAY_MS,
  fromMs: number,
  toMs: number,
  limit: number,
  offset: number,
): Promise<AccountTraffic[]> {
  const [span, params] = spanRows(step, fromMs, toMs);
  const rows = await db.all(
    `SELECT a.id AS account_id, COALESCE(t.requests, 0) AS requests FROM accounts a
     LEFT JOIN (
       SELECT k.account_id, SUM(u.requests) AS requests FROM api_keys k JOIN (${span}) u ON u.key_name = k.file_name
       GROUP BY k.account_id
     ) t ON t.account_id = a.id
     ORDER BY COALESCE(t.requests, 0) DESC, a.email, a.id LIMIT ? OFFSET ?`,
    [...params, limit, offset],
  );
  return rows.map((r) => ({ accountId: String(r.account_id), requests: Number(r.requests) }));
}

/** The requests of each of the accounts' keys together from `fromMs` to `toMs` (as accountsByTraffic reads them). */
export async function requestsOfAccounts(
  db: PortalDatabase,
  accountIds: readonly string[],
  step: typeof HOUR_MS | typeof DAY_MS,
  fromMs: number,
  toMs: number,
): Promise<Map<string, number>> {
  const found = new Map<string, number>(accountIds.map((id) => [id, 0]));
  if (accountIds.length === 0) return found;
  const [span, params] = spanRows(step, fromMs, toMs);
  const rows = await db.all(
    `SELECT k.account_id, SUM(u.requests) AS requests FROM api_keys k JOIN (${span}) u ON u.key_name = k.file_name
     WHERE k.account_id IN (${placeholders(accountIds.length)}) GROUP BY k.account_id`,
    [...params, ...accountIds],
  );
  for (const r of rows) found.set(String(r.account_id), Number(r.requests));
  return found;
}
