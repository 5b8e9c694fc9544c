// Sale windows relative to `now`: sales start at daily drop times, on the hour, UTC, and run a few days.
import type { Random } from "./random.ts";
import { createWeighted } from "./random.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Daily drop times (UTC hour) and how often sales start at each. */
const DROP_HOURS: readonly (readonly [number, number])[] = [
  [12, 50],
  [17, 35],
  [9, 15],
];

/** Usual sale lengths in hours. */
const DURATIONS = createWeighted([
  [36, 1],
  [48, 3],
  [60, 1],
  [72, 3],
  [84, 1],
  [96, 2],
]);

/** How far ahead upcoming sales are announced. */
const UPCOMING_HORIZON_MS = 3 * DAY_MS;
/** How far back ended sales go. */
const ENDED_HORIZON_MS = 14 * DAY_MS;
/** A long-running sale lasts two weeks. */
const LONG_SALE_MS = 14 * DAY_MS;

export type SaleStatus = "ended" | "active" | "upcoming";
/** `normal` runs 36-96 h, `long` two weeks, `open` has no end. */
export type SaleLength = "normal" | "long" | "open";

export interface SaleWindow {
  /** Epoch ms, on the hour. */
  begins: number;
  /** Epoch ms, on the hour; null when open-ended. */
  ends: number | null;
}

/** A window that has the given status at `now` (epoch ms). */
export function pickWindow(rng: Random, status: SaleStatus, length: SaleLength, now: number): SaleWindow {
  if (status === "active" && length === "open")
    return { begins: pickDrop(rng, now - 21 * DAY_MS, now - 2 * DAY_MS), ends: null };
  const duration = length === "long" ? LONG_SALE_MS : DURATIONS(rng) * HOUR_MS;
  let begins: number;
  if (status === "upcoming") begins = pickDrop(rng, now, now + UPCOMING_HORIZON_MS);
  else if (status === "ended") begins = pickDrop(rng, now - ENDED_HORIZON_MS - duration, now - duration);
  else begins = pickDrop(rng, now - Math.min(duration, 3 * DAY_MS), now);
  return { begins, ends: begins + duration };
}

/** A drop time t with from < t <= to, weighted by how popular its hour is. */
function pickDrop(rng: Random, from: number, to: number): number {
  const candidates: (readonly [number, number])[] = [];
  for (let day = Math.floor(from / DAY_MS) * DAY_MS; day <= to; day += DAY_MS) {
    for (const [hour, weight] of DROP_HOURS) {
      const t = day + hour * HOUR_MS;
      if (t > from && t <= to) candidates.push([t, weight]);
    }
  }
  // Every caller asks for at least a day and a half, so this only guards against misuse.
  if (candidates.length === 0) return Math.floor(to / HOUR_MS) * HOUR_MS;
  return createWeighted(candidates)(rng);
}

/** RFC 3339 UTC with seconds: 2026-11-22T17:00:00Z. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
