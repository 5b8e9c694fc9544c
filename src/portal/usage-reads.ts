// What the portal's usage pages read from the usage store (src/usage/store.ts): a span's series and totals for some
// keys, and each key's last use with whether it is idle.
import type { PortalDatabase } from "../db/database.ts";
import type { PartnerKey } from "./partner-keys.ts";
import { DAY_MS, HOUR_MS, lastUsed, series, zeroCounts } from "../usage/store.ts";
import type { Counts, Point } from "../usage/store.ts";

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

/** Some keys' figures over a span: every period (oldest first, the current one last) and the totals. */
export interface UsageReport {
  span: SpanName;
  step: number;
  points: Point[];
  totals: Counts;
}

/** The keys' (names in the keys file) figures over `span` up to now: the current hour or day is the last period. */
export async function readUsage(
  db: PortalDatabase,
  keyNames: readonly string[],
  span: SpanName,
  now: number,
): Promise<UsageReport> {
  const { step, periods } = SPANS[span];
  const current = now - (now % step);
  const points = await series(db, keyNames, step, current - (periods - 1) * step, current + step);
  const totals = zeroCounts();
  for (const p of points) for (const k of Object.keys(totals) as (keyof Counts)[]) totals[k] += p.counts[k];
  return { span, step, points, totals };
}

/** When a key was last used (epoch ms, to the minute as shown), or null; and whether it is idle. */
export interface KeyUse {
  last: number | null;
  idle: boolean;
}

/** Each key's use, by key ID: a live key is idle when not used for IDLE_AFTER_MS (or never, made that long ago). */
export async function keysUse(
  db: PortalDatabase,
  keys: readonly PartnerKey[],
  now: number,
): Promise<Map<string, KeyUse>> {
  const last = await lastUsed(
    db,
    keys.map((k) => k.name),
  );
  return new Map(
    keys.map((k) => {
      const at = last.get(k.name) ?? null;
      const idle = k.status === "active" && now - (at ?? k.created) >= IDLE_AFTER_MS;
      return [k.id, { last: at, idle }];
    }),
  );
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
