// Two sales that change while someone watches (`npm start`'s sample): one begins at the first whole minute at least a
// minute after `now`, and another ends a minute after that, so that a client of GET /v1/events sees a live
// `sale.begins` and `sale.ends` soon after the sample is built. Each is an encore of an active sale of its store,
// listing a few of that sale's products (ones no other sale lists: a product is in two sales at most).
import type { Store } from "../schema.ts";
import type { PlannedSale } from "./sales.ts";
import { slugify } from "./text.ts";

/** The live sale begins this long after `now` at least, on the next whole minute. */
const LEAD_MS = 60_000;
const MINUTE_MS = 60_000;
/** The beginning sale runs two days, like a usual sale. */
const RUNS_MS = 48 * 3_600_000;
/** Products each live sale lists, at most. */
const PRODUCTS = 12;

/** The instant the beginning live sale begins: the first whole minute at least LEAD_MS after `now` (epoch ms). */
export function liveSaleBegins(now: number): number {
  return Math.ceil((now + LEAD_MS) / MINUTE_MS) * MINUTE_MS;
}

/**
 * The two live sales for `plan` (its products filled in) around `now`: the women's store's beginning one, and the
 * men's ending one a minute later. A store without an active sale to take products from gets none.
 */
export function planLiveSales(plan: readonly PlannedSale[], now: number): PlannedSale[] {
  const listings = new Map<number, number>();
  for (const sale of plan) for (const id of sale.productIds) listings.set(id, (listings.get(id) ?? 0) + 1);
  const begins = liveSaleBegins(now);
  const out: PlannedSale[] = [];
  const encore = (
    store: Store,
    name: (source: string) => string,
    window: (source: PlannedSale) => [number, number],
  ) => {
    const source = plan
      .filter((s) => s.store === store && s.status === "active")
      .sort((a, b) => b.productIds.length - a.productIds.length || (a.key < b.key ? -1 : 1))[0];
    if (!source) return;
    const [from, to] = window(source);
    const saleName = name(source.name);
    out.push({
      ...source,
      key: `${slugify(saleName, 50)}-live`,
      name: saleName,
      status: from > now ? "upcoming" : "active",
      begins: from,
      ends: to,
      size: 0,
      productIds: source.productIds.filter((id) => listings.get(id) === 1).slice(0, PRODUCTS),
    });
  };
  encore(
    "women",
    (name) => `${name}: Encore`,
    () => [begins, begins + RUNS_MS],
  );
  encore(
    "men",
    (name) => `Last Call: ${name}`,
    (source) => [source.begins, begins + MINUTE_MS],
  );
  return out;
}
