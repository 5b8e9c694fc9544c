// Cases that measure our server (the handler, or as deployed) against a bare node:http server sending the same bytes
// and headers from memory, and the handler against serve-handler on the same files too. Each round starts new
// processes, checks their bytes, warms each up, measures every case on them (the servers back to back, which goes
// first alternating) and stops them: a server process keeps the speed it starts with for its lifetime, and that speed
// differs from one start to the next by up to 16% here (bare: 10.9-11.0 us a request in two starts, 12.6-12.9 in five),
// so with one process a side one unlucky start decided every round. Each server's figures are those of its median
// round, and each ratio the median of the rounds' own (lib/rounds.ts pairedRatio).
import { relative } from "node:path";
import { expectOk, expectSameBytes, waitForBrotli } from "../lib/check.ts";
import { errorsVerdict, fmtMs, fmtX, note, renderTable, starvedWarnings, verdict } from "../lib/report.ts";
import type { Table, Verdict } from "../lib/report.ts";
import { medianRun, pairedRatio } from "../lib/rounds.ts";
import type { Run } from "../lib/rounds.ts";
import type { ServerChild } from "../lib/servers.ts";
import { bareRoutes, fetchReference, HOST } from "./context.ts";
import type { Reference, ServeBench } from "./context.ts";
import type { BareRoute } from "./server-child.ts";

/** Targets: ours >= 0.9x bare (the handler, and as deployed: issue 10), the handler >= 4x serve-handler, p99 < 5 ms. */
const TARGETS = { bare: 0.9, "serve-handler": 4, p99Ms: 5 } as const;
const SERVERS = ["handler", "deployed", "bare", "serve-handler"] as const;
type Server = (typeof SERVERS)[number];
const name = (s: Server) => (s === "deployed" ? "as deployed" : s);

/** One case: a resource in one encoding. */
export interface BareCase {
  label: string;
  resource: "product" | "list";
  br: boolean;
  /** Whether serve-handler serves it too (the product: the sale list is composed in memory, no file on disk). */
  serveHandler?: boolean;
  note?: string;
}

/**
 * Measures `cases` on our server (`subject`, started by `start` each round) against bare and serve-handler, and
 * renders the table and the PASS/FAIL lines: ours/bare (and ours/serve-handler) req/s in every case, p99 for the
 * handler's product detail; info lines for the p99s without a target.
 */
export async function againstBare(
  b: ServeBench,
  subject: "handler" | "deployed",
  cases: readonly BareCase[],
  start: (round: number, warm: string) => Promise<ServerChild>,
): Promise<{ table: string; verdicts: Verdict[] }> {
  const { snap, o } = b;
  const q = `?apikey=${snap.key}`;
  const key = (c: BareCase) => `${c.resource}${c.br ? "Br" : "Id"}` as const;
  const headers = (c: BareCase): Record<string, string> => (c.br ? { "Accept-Encoding": "br" } : {});
  const target = (c: BareCase, s: Server) =>
    s === "serve-handler"
      ? `/${relative(snap.product.staticDir, c.br ? `${snap.product.file}.br` : snap.product.file)}${q}`
      : `${snap[c.resource].path}${q}`;
  const serves = (s: Server, c: BareCase) => s !== "serve-handler" || c.serveHandler === true;
  const runs = new Map(cases.map((c) => [c, new Map<Server, Run[]>()]));
  const changed = new Set<BareCase>();
  let ref: Reference | undefined;
  let routes: BareRoute[] = [];
  for (let round = 0; round < o.rounds; round++) {
    b.log(`round ${round + 1}/${o.rounds} of the ${name(subject)} cases: starting their servers ...`);
    // Which of ours and bare starts first alternates by round (round 1's bare replays what ours sent, so ours starts
    // first there): of two servers started one after the other, the first measured up to 6% slower here, whichever
    // it was (bench/serve/metering.ts), and a fixed order would put that on one side of every ratio.
    const servers = new Map<Server, ServerChild>();
    const startBare = async () => {
      const bare = { mode: "bare", host: HOST, port: 0, routes } as const;
      servers.set("bare", await b.start(`bare-${subject}-${round + 1}`, bare, target(cases[0]!, "bare")));
    };
    if (round % 2 === 1) await startBare();
    servers.set(subject, await start(round, target(cases[0]!, subject)));
    const url = (s: Server, c: BareCase) => `http://${HOST}:${servers.get(s)!.port}${target(c, s)}`;
    if (!ref) {
      ref = await fetchReference(b, `http://${HOST}:${servers.get(subject)!.port}`, name(subject));
      routes = await bareRoutes(b, ref, subject);
    }
    if (round % 2 === 0) await startBare();
    const shCase = cases.find((c) => c.serveHandler);
    if (round === 0 && shCase) {
      const config = { mode: "serve-handler", host: HOST, port: 0, publicDir: snap.product.staticDir } as const;
      servers.set("serve-handler", await b.start("serve-handler", config, target(shCase, "serve-handler")));
    }
    // The others send round 1's bytes (serve-handler the .br file as a plain file, without Content-Encoding); ours
    // too, unless a sale began or ended since (the handler picks bodies by the clock): reported, not fatal.
    const check = async (c: BareCase, s: Server) => {
      const get = () => b.get(url(s, c), headers(c));
      // Our fresh server compresses a composed list in the background after it starts: its brotli is waited for.
      const res = c.br && s === subject ? await waitForBrotli(get, `${name(s)} ${c.label}`) : await get();
      expectOk(res, `${name(s)} ${c.label}`, c.br && s !== "serve-handler" ? "br" : "identity");
      if (s === subject && !res.body.equals(ref![key(c)].body)) changed.add(c);
      else expectSameBytes(res.body, ref![key(c)].body, `${name(s)} vs ${name(subject)}: ${c.label}`);
    };
    for (const c of cases) for (const s of servers.keys()) if (serves(s, c)) await check(c, s);
    for (const [i, c] of cases.entries()) {
      const streams = [...servers]
        .filter(([s]) => serves(s, c))
        .map(([s, child]) => ({
          name: s,
          url: url(s, c),
          pid: child.pid,
          headers: headers(c),
        }));
      const label = `${c.label} [round ${round + 1}/${o.rounds}]`;
      for (const [s, run] of await b.measure(streams, { rounds: 1, offset: i + round, label }))
        runs.get(c)!.set(s as Server, [...(runs.get(c)!.get(s as Server) ?? []), run]);
    }
    for (const c of cases) await check(c, subject);
    for (const child of [...servers.values()].reverse()) await b.stop(child);
  }

  const medians = new Map(cases.map((c) => [c, new Map([...runs.get(c)!].map(([s, list]) => [s, medianRun(list)]))]));
  const run = (c: BareCase, s: Server) => medians.get(c)!.get(s);
  const ratios = (c: BareCase, s: Server) =>
    [
      pairedRatio(run(c, subject), run(c, s), (x) => x.r.requestsPerSec),
      pairedRatio(run(c, s), run(c, subject), (x) => x.cpu),
    ] as const;
  const t: Table = {
    columns: ["case", "server", "ours/x req/s", "ours/x CPU"],
    groups: cases.map((c) => ({
      label: c.label,
      bytes: ref![key(c)].body.length,
      rows: SERVERS.filter((s) => run(c, s)).map((s) => ({
        name: name(s),
        run: run(c, s)!,
        ...(s !== subject && { ratios: ratios(c, s) }),
      })),
    })),
    notes: [
      "  ours/x req/s: our server's requests/s over that server's (the targets below use this), taken within each round",
      "    (the two runs back to back), the median over the rounds: not the quotient of the two medians shown.",
      "  ours/x CPU: that server's CPU time per request over ours (CPU us/req: the server process's user+system time over",
      "    requests): less disturbed than req/s when other processes share the server's core, but not immune.",
      `  core: the server's CPU time over the run's wall time; "!": under 85%, it was not the bottleneck all the time.`,
      ...cases.filter((c) => c.note).map((c) => `  ${c.label}: ${c.note}`),
      ...[...changed].map(
        (c) => `  ${c.label}: WARNING: our server's body changed during the run (a sale boundary passed): rerun`,
      ),
    ],
  };
  const verdicts: Verdict[] = [];
  for (const other of ["bare", "serve-handler"] as const) {
    const measured = cases.filter((c) => run(c, other)).map((c) => [c.label, ...ratios(c, other)] as const);
    const all = measured.map(([label, r, cpu]) => `${label} ${fmtX(r)}${cpu !== null ? ` (CPU ${fmtX(cpu)})` : ""}`);
    const text = `${subject === "handler" ? "handler" : "as-deployed"}/${other} req/s >= ${TARGETS[other]}x in every ${subject === "handler" ? "" : "as-deployed "}case: ${all.join(", ")}`;
    if (measured.length)
      verdicts.push(
        verdict(
          measured.every(([, r]) => r !== null && r >= TARGETS[other]),
          text,
        ),
      );
  }
  const p99 = (c: BareCase, s: Server) => `${fmtMs(run(c, s)?.r.p99 ?? NaN)} ms`;
  const p99s = (list: readonly BareCase[]) =>
    list.map((c) => `${c.label}${list.length === 1 ? " p99" : ""} ${p99(c, subject)} (bare ${p99(c, "bare")})`);
  const products = cases.filter((c) => c.resource === "product");
  if (subject === "deployed")
    verdicts.push(...note("info", `as-deployed p99 (no target of its own): ${p99s(cases).join(", ")}`));
  else if (products.length) {
    const text = `handler p99 < ${TARGETS.p99Ms} ms at ${o.connections} connections, product detail: ${p99s(products).join(", ")}`;
    verdicts.push(
      verdict(
        products.every((c) => run(c, subject)!.r.p99 < TARGETS.p99Ms),
        text,
      ),
    );
  }
  for (const c of cases.filter((x) => subject === "handler" && x.resource === "list")) {
    const best = Math.max(...[...medians.get(c)!.values()].map((r) => r.r.requestsPerSec));
    const text = `${p99s([c]).join("")}: no p99 target; with ${o.connections} connections even the bare server's mean latency is ${fmtMs((o.connections / best) * 1000)} ms (Little's law: connections / req/s)`;
    verdicts.push(...note("info", text));
  }
  verdicts.push(
    ...starvedWarnings(t, "measurement(s)"),
    errorsVerdict(t, "in the cases of the table above (all 200s)"),
  );
  return { table: renderTable(t), verdicts };
}
