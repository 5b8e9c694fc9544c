// `npm run bench -- meter [--calls 5000000] [--keys 1,1000] [--rounds 5]`: the cost of Meter.count, the usage
// counting every keyed request pays (issue 35: per endpoint as well; issue 33: the request path's budget). In process,
// no server: 20 requests a simulated millisecond (a new minute every 1.2 M calls), a mix of routes and statuses, and
// a hand-over every 100,000 calls as the shipper makes one every 5 s. With 1 key every request takes the fast path
// (the row of the last request); with 1,000 keys in turn each is a map lookup. Reports ns a call, the median round.
import { parseArgs } from "node:util";
import { ROUTE_INDEX } from "../src/api/routing.ts";
import { Meter } from "../src/usage/meter.ts";

const { values: opts } = parseArgs({
  options: {
    calls: { type: "string", default: "5000000" },
    keys: { type: "string", default: "1,1000" },
    rounds: { type: "string", default: "5" },
  },
});
const calls = Number(opts.calls);
const rounds = Number(opts.rounds);
const T0 = Date.parse("2026-11-22T17:00:00Z");
const ROUTES = [ROUTE_INDEX.sale_list, ROUTE_INDEX.sale_detail, ROUTE_INDEX.product, ROUTE_INDEX.search];
const STATUSES = [200, 200, 304, 200, 304, 200, 404, 200, 429, 200, 304, 200, 200, 304, 200, 500];

/** One round: `calls` requests over `keys` keys; returns ns a call and the requests the batches held (a check). */
function round(keys: number): { ns: number; counted: number } {
  const m = new Meter("bench", 1_000_000);
  const names = Array.from({ length: keys }, (_, k) => `p.account${k}.key${k}`);
  let counted = 0;
  const hand = () => {
    const batch = m.take();
    if (!batch) return;
    for (const row of batch.rows) for (let i = 0; i < 5; i++) counted += row.counts[i]!;
    m.acknowledge(batch);
  };
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    m.count(names[i % keys]!, ROUTES[i & 3]!, STATUSES[i & 15]!, 1200, T0 + ((i / 20) | 0));
    if (i % 100_000 === 99_999) hand();
  }
  const ns = Number(process.hrtime.bigint() - started) / calls;
  hand();
  return { ns, counted };
}

for (const keys of opts.keys.split(",").map(Number)) {
  const results: number[] = [];
  for (let r = 0; r < rounds + 1; r++) {
    const { ns, counted } = round(keys);
    if (counted !== calls) throw new Error(`counted ${counted} of ${calls} requests`);
    if (r > 0) results.push(ns); // the first round warms the JIT up
  }
  results.sort((a, b) => a - b);
  const median = results[results.length >> 1]!;
  console.log(
    `meter.count, ${keys} key${keys === 1 ? "" : "s"}: ${median.toFixed(1)} ns a call (median of ${rounds} rounds of ${calls} calls; min ${results[0]!.toFixed(1)}, max ${results.at(-1)!.toFixed(1)})`,
  );
}
