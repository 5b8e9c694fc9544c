// `npm run fuzz:worst` (and the first half of `npm run fuzz`): the worst requests the parsers accept, one at a time,
// against the real server on a sample snapshot of 100,000 products; fails when one takes over 50 ms of server CPU,
// grows the server's RSS by over 20 MB, gets a wrong status, or keeps /healthz waiting over 50 ms.
//
//   tsx scripts/fuzz-worst.ts [--products 100000] [--seed 1] [--random 1000] [--max-ms 50] [--max-rss-mb 20]
import { parseArgs } from "node:util";
import { freePort, HOST, prepareData, startServerChild } from "./lib/server-child.ts";
import { warmUpCases, worstCases } from "./lib/worst-cases.ts";
import { runWorstCases, worstFailures } from "./lib/worst-run.ts";
import { runMain } from "./lib/run-main.ts";

const { values: args } = parseArgs({
  options: {
    products: { type: "string", default: "100000" },
    seed: { type: "string", default: "1" },
    random: { type: "string", default: "1000" },
    "max-ms": { type: "string", default: "50" },
    "max-rss-mb": { type: "string", default: "20" },
  },
});
const log = (line: string) => process.stdout.write(line + "\n");

async function main(): Promise<number> {
  const maxMs = Number(args["max-ms"]);
  const maxRss = Number(args["max-rss-mb"]);
  const port = await freePort();
  log(`fuzz:worst: ${args.products} products, seed ${args.seed}, ${args.random} random mixtures`);
  const data = await prepareData({ products: Number(args.products), seed: Number(args.seed), port });
  const server = await startServerChild({ dataDir: data.dataDir, keysFile: data.keysFile, port });
  try {
    const cases = worstCases(data, Number(args.seed), Number(args.random));
    // Once round to warm the server (its code compiled, its caches as they will be), then the measured round.
    await runWorstCases(port, server.pid, warmUpCases(cases));
    const measures = await runWorstCases(port, server.pid, cases);
    const byCpu = [...measures].sort((a, b) => b.cpuMs - a.cpuMs);
    log(`\nthe 12 costliest of ${measures.length} requests (server ${HOST}:${port}):`);
    log("  cpu ms  wall ms  health ms  rss MB  status  case");
    for (const m of byCpu.slice(0, 12)) {
      log(
        `  ${m.cpuMs.toFixed(1).padStart(6)}  ${m.wallMs.toFixed(1).padStart(7)}  ${m.healthMs.toFixed(1).padStart(9)}  ${m.rssMb.toFixed(1).padStart(6)}  ${String(m.status).padStart(6)}  ${m.case.name}`,
      );
    }
    const failures = worstFailures(measures, maxMs, maxRss);
    const slowHealth = measures.filter((m) => m.healthMs > maxMs);
    for (const m of slowHealth) failures.push(`${m.case.name}: /healthz waited ${m.healthMs.toFixed(1)} ms`);
    const maxHealth = Math.max(...measures.map((m) => m.healthMs));
    log(
      `\nworst: ${byCpu[0]!.cpuMs.toFixed(1)} ms CPU (${byCpu[0]!.case.name}); /healthz waited at most ${maxHealth.toFixed(1)} ms; ` +
        `RSS moved at most ${Math.max(...measures.map((m) => m.rssMb)).toFixed(1)} MB by one request`,
    );
    if (server.exit()) failures.push(`the server exited: ${JSON.stringify(server.exit())}`);
    if (failures.length > 0) {
      log(`FAIL: ${failures.length} problem(s):`);
      for (const f of failures.slice(0, 20)) log(`  ${f}`);
      return 1;
    }
    log(`PASS: every request within ${maxMs} ms of server CPU and ${maxRss} MB of RSS, /healthz within ${maxMs} ms`);
    return 0;
  } finally {
    await server.stop();
    await data.cleanup();
  }
}

runMain("fuzz:worst", main);
