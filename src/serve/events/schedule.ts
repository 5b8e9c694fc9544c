// The sale events of one snapshot: every sale's begins and ends at their instants, read from the sale detail
// resources' time segments (nothing is rebuilt), and what a swap to another snapshot announces or updates.
import { createHash } from "node:crypto";
import { matchEndpoint } from "../../api/routing.ts";
import type { BlobRef } from "../../snapshot/body-cache.ts";
import type { LoadedSegment, LoadedSnapshot } from "../../snapshot/load.ts";

/** The event types, in the order events of one second are sent (ends before begins, swaps last). */
export const EVENT_TYPES = ["sale.ends", "sale.begins", "sale.announced", "sale.updated"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One event: its ID (derived from the event itself), the second it is placed at in the stream, and its sale. */
export interface SaleEvent {
  id: string;
  type: EventType;
  /** The second the event is sent at (begins/ends: its instant; a swap's events: the swap's second). */
  pos: number;
  /** The scheduled instant the data's `at` gives, epoch seconds (a swap's events: the new snapshot's build). */
  at: number;
  store: string;
  key: string;
  /** The sale's body as the sale list shows it then (read from the snapshot's bodies when sent). */
  body: BlobRef;
}

/** One sale of a snapshot: its instants and its states. */
interface ScheduledSale {
  store: string;
  key: string;
  begins: number;
  ends: number | null;
  segments: readonly LoadedSegment[];
}

/** A snapshot's sales by `store/key` and its begins/ends events by second, ascending. */
export interface Schedule {
  sales: Map<string, ScheduledSale>;
  /** Begins/ends events, sorted by (pos, rank, id). */
  events: SaleEvent[];
  /** The snapshot, whose bodies the events' blobs are read from. */
  snapshot: LoadedSnapshot;
}

/** The rank of a type within a second: the order events of one second are sent in. */
const rankOf = (type: EventType): number => EVENT_TYPES.indexOf(type);

/**
 * `<at>.<rank>.<hash>`: the hash of type, store, sale key, instant and the body's hash, so the same on every server
 * for the same snapshot history; the prefix lets a server that does not hold the event resume from its second.
 */
function eventId(type: EventType, at: number, store: string, key: string, bodyHash: string): string {
  const hash = createHash("sha256").update(`${type}\0${store}\0${key}\0${at}\0${bodyHash}`).digest("base64url");
  return `${at}.${rankOf(type)}.${hash.slice(0, 16)}`;
}

/** Orders events as a stream sends them. */
export function compareEvents(a: SaleEvent, b: SaleEvent): number {
  return a.pos - b.pos || rankOf(a.type) - rankOf(b.type) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The segment in force at `t`, or undefined. */
function segmentAt(segments: readonly LoadedSegment[], t: number): LoadedSegment | undefined {
  return segments.find((s) => (s.from === null || s.from <= t) && (s.to === null || t < s.to));
}

/** A sale detail segment's blob (sale detail bodies are blobs, never composed lists). */
function blobOf(segment: LoadedSegment): BlobRef {
  if ("sales" in segment.body) throw new Error("a sale detail resource holds a list");
  return segment.body;
}

/** Reads every sale of `snapshot` from its sale detail resources and lists their begins and ends events. */
export function createSchedule(snapshot: LoadedSnapshot): Schedule {
  const sales = new Map<string, ScheduledSale>();
  const events: SaleEvent[] = [];
  for (const [path, segments] of snapshot.resources) {
    if (!path.startsWith("/v1/sales/") || segments.length === 0) continue;
    const match = matchEndpoint(path);
    if (match?.endpoint.id !== "getSale") continue;
    // The first state (upcoming: no products, small) says when the sale begins and ends.
    const first = JSON.parse(snapshot.bodies.get(blobOf(segments[0]!)).identity.toString("utf8")) as {
      begins: string;
      ends?: string;
    };
    const sale: ScheduledSale = {
      store: match.params.store!,
      key: match.params.sale_key!,
      begins: Date.parse(first.begins) / 1000,
      ends: first.ends === undefined ? null : Date.parse(first.ends) / 1000,
      segments,
    };
    sales.set(`${sale.store}/${sale.key}`, sale);
    const add = (type: EventType, at: number, segment: LoadedSegment | undefined) => {
      if (!segment) return;
      const body = blobOf(segment);
      events.push({ id: eventId(type, at, sale.store, sale.key, body.hash), type, pos: at, at, ...key(sale), body });
    };
    add("sale.begins", sale.begins, segmentAt(segments, sale.begins));
    // A sale ends as the list last showed it.
    if (sale.ends !== null) add("sale.ends", sale.ends, segmentAt(segments, sale.ends - 1));
  }
  events.sort(compareEvents);
  return { sales, events, snapshot };
}

const key = (sale: ScheduledSale) => ({ store: sale.store, key: sale.key });

/** The index of the first event of `events` (sorted) placed after second `t`. */
export function firstAfter(events: readonly SaleEvent[], t: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid]!.pos <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * What a swap from `old` to `next` at second `now` tells clients: `sale.announced` for a sale upcoming or active
 * in `next` that `old` did not have (or had ended), `sale.updated` for one whose body in force now, or whose
 * instants, changed. Their `at` is `next`'s build instant, so that every server swapping between the same two
 * snapshots gives the same IDs; `pos` is the second of the swap on this server.
 */
export function swapEvents(old: Schedule | null, next: Schedule, now: number): SaleEvent[] {
  const at = Math.floor(Date.parse(next.snapshot.manifest.built_at) / 1000);
  const out: SaleEvent[] = [];
  for (const [k, sale] of next.sales) {
    if (sale.ends !== null && sale.ends <= now) continue;
    const segment = segmentAt(sale.segments, now);
    if (!segment) continue;
    const body = blobOf(segment);
    const before = old?.sales.get(k);
    const beforeSegment =
      before && (before.ends === null || before.ends > now) ? segmentAt(before.segments, now) : null;
    let type: EventType;
    if (!before || !beforeSegment) type = "sale.announced";
    else if (blobOf(beforeSegment).hash !== body.hash || before.begins !== sale.begins || before.ends !== sale.ends)
      type = "sale.updated";
    else continue;
    out.push({ id: eventId(type, at, sale.store, sale.key, body.hash), type, pos: now, at, ...key(sale), body });
  }
  return out.sort(compareEvents);
}
