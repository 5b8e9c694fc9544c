// The event streams grouped by what they are sent (the same affid, store and type filters), so that a batch's bytes
// are made once per group and the same bytes written to each of its streams; and the frames of the next instant,
// rendered for every group ahead of it (but for their `sent`), so that little is left to do at the instant. A
// stream's filters are read from its query here too (filtersOf).
import { STORES } from "../../catalog/schema.ts";
import { invalidParameter } from "../../errors.ts";
import type { Joined } from "./fan-out.ts";
import { renderTemplate } from "./frames.ts";
import type { SaleBytes, Template } from "./frames.ts";
import { EVENT_TYPES } from "./schedule.ts";
import type { EventType, SaleEvent } from "./schedule.ts";

/** Streams that are sent the same bytes. */
export interface Group<S> extends Joined {
  key: string;
  affid: string;
  stores: ReadonlySet<string> | null;
  types: ReadonlySet<EventType> | null;
  members: Set<S>;
}

/** The most bytes of frames rendered ahead of an instant, over all groups; past it a group's are made at its turn. */
const AHEAD_BYTES = 16 * 1024 * 1024;

/** The frames of the events of `events` that `g` wants, but for `sent`; null when it wants none. */
export function render<S>(
  events: readonly SaleEvent[],
  g: Group<S>,
  sales: (e: SaleEvent) => SaleBytes,
): Template | null {
  const wanted = g.stores === null && g.types === null ? events : events.filter((e) => wants(g, e));
  return wanted.length === 0 ? null : renderTemplate(wanted, sales, g.affid);
}

function wants<S>(g: Group<S>, e: SaleEvent): boolean {
  return (g.stores === null || g.stores.has(e.store)) && (g.types === null || g.types.has(e.type));
}

/** The groups of a hub's streams (each holds its group); `seq` gives the fan-out's batch count (a group's `since`). */
export function createGroups<S extends { group: Group<S> }>(seq: () => number) {
  const groups = new Map<string, Group<S>>();
  /** The next instant's events, with their sales then, and each group's frames of them rendered so far. */
  let ahead: {
    events: readonly SaleEvent[];
    sales: (e: SaleEvent) => SaleBytes;
    templates: Map<Group<S>, Template | null>;
    bytes: number;
  } | null = null;

  const prepare = (g: Group<S>) => {
    if (ahead === null || ahead.bytes > AHEAD_BYTES) return;
    const t = render(ahead.events, g, ahead.sales);
    ahead.templates.set(g, t);
    ahead.bytes += t?.bytes.length ?? 0;
  };

  return {
    /** Every group, by key (what the fan-out goes through). */
    all: groups as ReadonlyMap<string, Group<S>>,

    /** The group of this affid and these filters, made (and its frames of the next instant rendered) if new. */
    of(affid: string, stores: ReadonlySet<string> | null, types: ReadonlySet<EventType> | null): Group<S> {
      const key = JSON.stringify([affid, stores && [...stores].sort(), types && [...types].sort()]);
      let g = groups.get(key);
      if (!g) {
        groups.set(key, (g = { since: seq(), key, affid, stores, types, members: new Set() }));
        prepare(g);
      }
      return g;
    },

    /** Adds `s` to its group. */
    join(s: S): void {
      s.group.members.add(s);
    },

    /** Takes `s` out of its group, and the group away once empty. */
    leave(s: S): void {
      const g = s.group;
      g.members.delete(s);
      if (g.members.size > 0) return;
      groups.delete(g.key);
      ahead?.templates.delete(g);
    },

    /** Renders `events` (the next instant's, their sales read through `sales`) for every group, now and as made. */
    prepare(events: readonly SaleEvent[], sales: (e: SaleEvent) => SaleBytes): void {
      if (ahead !== null && sameEvents(ahead.events, events)) return;
      ahead = { events, sales, templates: new Map(), bytes: 0 };
      for (const g of groups.values()) prepare(g);
    },

    /** The frames rendered ahead for `events` by group (a group missing: none rendered), or null if not these. */
    take(events: readonly SaleEvent[]): Map<Group<S>, Template | null> | null {
      if (ahead === null || !sameEvents(ahead.events, events)) return null;
      const { templates } = ahead;
      ahead = null;
      return templates;
    },

    /** Forgets what was rendered ahead (there is no next instant). */
    forget(): void {
      ahead = null;
    },
  };
}

function sameEvents(a: readonly SaleEvent[], b: readonly SaleEvent[]): boolean {
  return a.length === b.length && a.every((e, i) => e === b[i]);
}

/** A stream's filters from its query: `store` and `types`, each repeatable or comma-separated; null when absent. */
export function filtersOf(query: Map<string, string[]>) {
  return {
    stores: values(query, "store", STORES, (v) => (v === "children" ? "kids" : v)),
    types: values(query, "types", EVENT_TYPES),
  };
}

/** A repeatable parameter (also comma-separated) checked against `allowed`; null when absent. */
function values<T extends string>(
  query: Map<string, string[]>,
  name: string,
  allowed: readonly T[],
  alias: (v: string) => string = (v) => v,
): ReadonlySet<T> | null {
  const given = query.get(name);
  if (!given) return null;
  const out = new Set<T>();
  for (const v of given.flatMap((g) => g.split(","))) {
    const value = alias(v);
    if (!(allowed as readonly string[]).includes(value))
      throw invalidParameter(name, `must be one of ${allowed.join(", ")} (repeatable)`);
    out.add(value as T);
  }
  return out;
}
