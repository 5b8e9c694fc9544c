// `npm run soak`: the memory soak (scripts/lib/soak.ts) from the command line; exit 1 with the reasons when it fails.
//
//   tsx scripts/soak.ts [--seconds 60] [--budget-mb 512] [--concurrency 24] [--products 6000] [--seed 1] [--fresh-share 0.85]
//
// Only 127.0.0.1 is loaded, and only for --seconds (plus a few quiet seconds of sampling); the server child is
// stopped at the end, pass or fail.
import { parseArgs } from "node:util";
import { runSoak, SOAK_BUDGET_MB, SOAK_PRODUCTS } from "./lib/soak.ts";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "60" },
    "budget-mb": { type: "string", default: String(SOAK_BUDGET_MB) },
    concurrency: { type: "string", default: "24" },
    products: { type: "string", default: String(SOAK_PRODUCTS) },
    seed: { type: "string", default: "1" },
    "fresh-share": { type: "string", default: "0.85" },
  },
});

const log = (line: string) => process.stdout.write(line + "\n");

runSoak({
  seconds: Number(args.seconds),
  budgetMb: Number(args["budget-mb"]),
  concurrency: Number(args.concurrency),
  products: Number(args.products),
  seed: Number(args.seed),
  freshShare: Number(args["fresh-share"]),
  onLine: log,
}).then(
  (result) => {
    if (result.failures.length) {
      log(`FAIL: ${result.failures.length} problem(s):`);
      for (const f of result.failures) log(`  ${f}`);
      process.exit(1);
    }
    log(
      `PASS: RSS max ${result.rss.max.toFixed(1)} MB within the budget of ${Number(args["budget-mb"])} MB and level; no 5xx, no socket error`,
    );
    process.exit(0);
  },
  (err: unknown) => {
    console.error(`soak: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  },
);
