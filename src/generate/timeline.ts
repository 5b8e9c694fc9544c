// Time: the intervals between the instants at which sales begin and end, and the segments a resource passes through.
import type { CatalogSale } from "../catalog/load.ts";
import type { Body, Segment } from "../snapshot/format.ts";

/** Every instant at which some sale begins or ends, ascending, distinct. */
export function saleBoundaries(sales: readonly CatalogSale[]): number[] {
  const set = new Set<number>();
  for (const s of sales) {
    set.add(s.beginsAt);
    if (s.endsAt !== null) set.add(s.endsAt);
  }
  return [...set].sort((a, b) => a - b);
}

/** One interval [from, to) between consecutive boundaries, with an instant inside it to evaluate state at. */
export interface Interval {
  from: number | null;
  to: number | null;
  at: number;
}

/** The intervals the boundaries cut time into: (-inf, b0), [b0, b1), ..., [bn, +inf). */
export function intervals(boundaries: readonly number[]): Interval[] {
  if (boundaries.length === 0) return [{ from: null, to: null, at: 0 }];
  const out: Interval[] = [{ from: null, to: boundaries[0]!, at: boundaries[0]! - 1 }];
  for (let i = 0; i < boundaries.length; i++) {
    const from = boundaries[i]!;
    out.push({ from, to: boundaries[i + 1] ?? null, at: from });
  }
  return out;
}

export function isActive(sale: CatalogSale, t: number): boolean {
  return sale.beginsAt <= t && (sale.endsAt === null || t < sale.endsAt);
}

export function isUpcoming(sale: CatalogSale, t: number): boolean {
  return t < sale.beginsAt;
}

/**
 * Evaluates a body per interval and merges neighbours with equal bodies (the same JSON) into segments; a null
 * body is a gap (the resource is a 404 then).
 */
export function segmentsOver(all: readonly Interval[], bodyAt: (t: number) => Body | null): Segment[] {
  const segments: Segment[] = [];
  let lastKey: string | null = null;
  for (const iv of all) {
    const body = bodyAt(iv.at);
    if (body === null) {
      lastKey = null;
      continue;
    }
    const key = JSON.stringify(body);
    const last = segments[segments.length - 1];
    if (last && key === lastKey && last[1] === iv.from) last[1] = iv.to;
    else segments.push([iv.from, iv.to, body]);
    lastKey = key;
  }
  return segments;
}

/** Merges half-open windows [from, to) (to null = open-ended) into disjoint ones, ascending. */
export function mergeWindows(
  windows: readonly { from: number; to: number | null }[],
): { from: number; to: number | null }[] {
  const sorted = [...windows].sort((a, b) => a.from - b.from);
  const out: { from: number; to: number | null }[] = [];
  for (const w of sorted) {
    const last = out[out.length - 1];
    if (last && (last.to === null || w.from <= last.to)) {
      if (last.to !== null && (w.to === null || w.to > last.to)) last.to = w.to;
    } else out.push({ ...w });
  }
  return out;
}
