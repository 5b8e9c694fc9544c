// The handler cases: pre-rendered GETs through our handler (createHandler + startServer, no request logs) against a
// bare node:http server sending the handler's bytes from memory, and the product against serve-handler on its files.
import { createRequire } from "node:module";
import { againstBare } from "./against-bare.ts";
import type { BareCase } from "./against-bare.ts";
import type { Family } from "./context.ts";

const CASES: readonly BareCase[] = [
  { label: "product detail, identity", resource: "product", br: false, serveHandler: true },
  {
    label: "product detail, br",
    resource: "product",
    br: true,
    serveHandler: true,
    note: "serve-handler does not negotiate encodings: it is asked for the blob's .json.br file (the same brotli bytes, without Content-Encoding)",
  },
  {
    label: "sale list, identity",
    resource: "list",
    br: false,
    note: "all active sales, all stores; composed in memory by the handler (no file on disk), so handler vs bare only",
  },
  { label: "sale list, br", resource: "list", br: true, note: "handler vs bare only, as above" },
];

export const handlerFamily: Family = {
  labels: CASES.map((c) => c.label),
  // Per round two servers started and warmed up (three in the first), and per case both measured (serve-handler once).
  seconds: (o, n) => (2 * o.rounds + 1) * (o.startupWarmup + 3) + (2 * o.rounds + 1) * n * (o.warmup + o.duration),
  async run(b, wanted) {
    const cases = CASES.filter((c) => wanted(c.label));
    const { table, verdicts } = await againstBare(b, "handler", cases, (round, warm) =>
      b.startHandler(`handler-${round + 1}`, warm),
    );
    const { version } = createRequire(import.meta.url)("serve-handler/package.json") as { version: string };
    const servers = `servers: handler = createHandler + startServer (src/serve), no request logs; bare = node:http writing the handler's bytes and headers from memory (a Map lookup on the URL, no auth); serve-handler ${version} on the product's body written out as <hash>.json and <hash>.json.br (the snapshot keeps bodies in packs); each round starts all three (serve-handler in the first round only: 4x off, one round says enough)`;
    return { text: `${servers}\n\n${table}`, verdicts };
  },
};
