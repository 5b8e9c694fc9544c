// The as-deployed cases (issue 10): the server as `npm run serve` runs it (src/cli/serve.ts from its environment,
// request logs on, stdout appended to a file) against a bare node:http server sending its bytes from memory; then
// every request log must have a line for each request the benchmark sent.
import { SERVER_NODE_FLAGS } from "../../src/serve/http/server.ts";
import { againstBare } from "./against-bare.ts";
import type { BareCase } from "./against-bare.ts";
import { logVerdicts } from "./context.ts";
import type { Deployed, Family } from "./context.ts";

const NOTE = "src/cli/serve.ts as npm run serve runs it, request logs on (stdout to a file); vs bare only";
const CASES: readonly BareCase[] = [
  { label: "as deployed: product detail, identity", resource: "product", br: false, note: NOTE },
  { label: "as deployed: product detail, br", resource: "product", br: true, note: NOTE },
  { label: "as deployed: sale list, br", resource: "list", br: true, note: NOTE },
];

export const deployedFamily: Family = {
  labels: CASES.map((c) => c.label),
  seconds: (o, n) => 2 * o.rounds * (o.startupWarmup + 3 + n * (o.warmup + o.duration)),
  async run(b, wanted) {
    const servers: Deployed[] = [];
    const cases = CASES.filter((c) => wanted(c.label));
    const { table, verdicts } = await againstBare(b, "deployed", cases, async (round, warm) => {
      const server = await b.startDeployed(`deployed-${round + 1}`, warm);
      servers.push(server);
      return server;
    });
    // Stopped with SIGTERM, each server wrote what its log buffer held before it exited: the files are complete.
    verdicts.push(...(await logVerdicts(servers, b.o.connections)));
    const how = `as deployed = node ${[...SERVER_NODE_FLAGS, "--import", "tsx", "src/cli/serve.ts"].join(" ")} with DATA_DIR, KEYS_FILE, PORT=0, HOST, BASE_URL, LOG_REQUESTS=1, METRICS_TOKEN and NODE_ENV=production, stdout >> ${b.workDir}/deployed-<round>.log; each round starts an as-deployed server and a bare server (replaying the as-deployed server's bytes and headers)`;
    return { text: `${how}\n\n${table}`, verdicts };
  },
};
