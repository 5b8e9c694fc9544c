// What the portal's usage pages read from the usage store (src/usage/store.ts): a span's series and totals for some
// keys, by key and by endpoint, and each key's last use with whether it is idle (a rotated key's old and new apart).
import type { PortalDatabase } from "../db/database.ts";
import type { PartnerKey } from "./partner-keys.ts";
import { PREVIOUS_SUFFIX } from "../usage/meter.ts";
import { countsBy, DAY_MS, detailRows, HOUR_MS, lastUsed, MINUTE_MS, series, zeroCounts } from "../usage/store.ts";
import type { Counts, DetailRow, Point } from "../usage/store.ts";

/** The spans a usage page shows: per hour from the per-minute figures (kept 48 h), per day from the per-day ones. */
export const SPANS = {
  "48h": { step: HOUR_MS, periods: 48, words: "the last 48 hours" },
  "30d": { step: DAY_MS, periods: 30, words: "the last 30 days" },
  "90d": { step: DAY_MS, periods: 90, words: "the last 90 days" },
} as const;
export type SpanName = keyof typeof SPANS;
const DEFAULT_SPAN: SpanName = "48h";

/** The span a `?span=` value names (absent: the default); null for anything else. */
export function parseSpan(value: string | undefined): SpanName | null {
  if (value === undefined || value === "") return DEFAULT_SPAN;
  return Object.hasOwn(SPANS, value) ? (value as SpanName) : null;
}

/** A key not used for this long (or never, and made this long ago) is idle. */
const IDLE_AFTER_MS = 30 * DAY_MS;

/**
 * Some keys' figures over a span: every period (oldest first, the current one last), the totals, and the totals by
 * key (name in the keys file) and by endpoint (route class), those with figures only.
 */
export interface UsageReport {
  span: SpanName;
  step: number;
  points: Point[];
  totals: Counts;
  byKey: Map<string, Counts>;
  byRoute: Map<string, Counts>;
}

/** Where `span`'s figures begin and end at `now` (the current hour or day is the last period). */
function spanWindow(span: SpanName, now: number) {
  const { step, periods } = SPANS[span];
  const current = now - (now % step);
  return { step, from: current - (periods - 1) * step, to: current + step };
}

/** The keys' (names in the keys file) figures over `span` up to now. */
export async function readUsage(
  db: PortalDatabase,
  keyNames: readonly string[],
  span: SpanName,
  now: number,
): Promise<UsageReport> {
  const { step, from, to } = spanWindow(span, now);
  // Per hour from the minutes, per day from the days, as `series` reads them.
  const grain = step === HOUR_MS ? MINUTE_MS : DAY_MS;
  const [points, byKey, byRoute] = await Promise.all([
    series(db, keyNames, step, from, to),
    countsBy(db, "key_name", keyNames, grain, from, to),
    countsBy(db, "route", keyNames, grain, from, to),
  ]);
  const totals = zeroCounts();
  for (const p of points) for (const k of Object.keys(totals) as (keyof Counts)[]) totals[k] += p.counts[k];
  return { span, step, points, totals, byKey, byRoute };
}

/** The keys' figures over `span` per period, key and endpoint: the rows of the CSV. */
export function readUsageRows(
  db: PortalDatabase,
  keyNames: readonly string[],
  span: SpanName,
  now: number,
): Promise<DetailRow[]> {
  const { step, from, to } = spanWindow(span, now);
  return detailRows(db, keyNames, step, from, to);
}

/**
 * A rotated key's use while the key it replaced is still accepted: each key's last use apart (the old key's requests
 * are counted under the name with PREVIOUS_SUFFIX, src/usage/meter.ts).
 */
interface RotationUse {
  /** When the key was replaced, and until when the old one is accepted (epoch ms). */
  rotated: number;
  graceUntil: number;
  /** The new key's last use (since the rotation), or null. */
  current: number | null;
  /**
   * The old key's last use: since the rotation, else its last before it when no request since could be the new
   * key's; null when it has not been used since the rotation (and the new key has).
   */
  previous: number | null;
}

/** When a key was last used (epoch ms, to the minute as shown), or null; and whether it is idle. */
export interface KeyUse {
  last: number | null;
  idle: boolean;
  /** While the key it replaced is accepted: each one's last use. */
  rotation?: RotationUse;
}

/**
 * Each key's use, by key ID: a live key is idle when not used for IDLE_AFTER_MS (or never, made that long ago), the
 * key it replaced counting while accepted.
 */
export async function keysUse(
  db: PortalDatabase,
  keys: readonly PartnerKey[],
  now: number,
): Promise<Map<string, KeyUse>> {
  const last = await lastUsed(db, [
    ...keys.map((k) => k.name),
    ...keys.filter((k) => k.graceUntil).map((k) => k.name + PREVIOUS_SUFFIX),
  ]);
  return new Map(
    keys.map((k) => {
      const at = last.get(k.name) ?? null;
      const rotation = k.graceUntil && k.rotated ? rotationUse(k, at, last.get(k.name + PREVIOUS_SUFFIX)) : undefined;
      const latest = Math.max(at ?? k.created, rotation?.previous ?? 0);
      const idle = k.status === "active" && now - latest >= IDLE_AFTER_MS;
      return [k.id, { last: at, idle, ...(rotation ? { rotation } : {}) }];
    }),
  );
}

/** A rotated key's use from the last use of its name (`last`) and of the key it replaced (`previous`). */
function rotationUse(key: PartnerKey, last: number | null, previous: number | undefined): RotationUse {
  const rotated = Date.parse(key.rotated!);
  const sinceRotation = (at: number | null | undefined) => (at != null && at >= rotated ? at : null);
  const current = sinceRotation(last);
  // Before the rotation the name's requests were the old key's: its last one, while the new key has made none.
  const before = current === null && last !== null ? last : null;
  return {
    rotated,
    graceUntil: Date.parse(key.graceUntil!),
    current,
    previous: sinceRotation(previous) ?? before,
  };
}

/** The spans the operator's accounts list orders by: the last 24 hours (from the minutes), or 30 days (whole days). */
export const TRAFFIC_SPANS = {
  "24h": { step: HOUR_MS, short: "24 h" },
  "30d": { step: DAY_MS, short: "30 days" },
} as const;
export type TrafficSpan = keyof typeof TRAFFIC_SPANS;

/** Where `span` begins and ends at `now`, and which figures it is read from (for accountsByTraffic). */
export function trafficWindow(span: TrafficSpan, now: number) {
  const { step } = TRAFFIC_SPANS[span];
  if (span === "24h") return { step, from: now - 24 * HOUR_MS, to: now + 1 };
  const today = now - (now % DAY_MS);
  return { step, from: today - 29 * DAY_MS, to: today + DAY_MS };
}
