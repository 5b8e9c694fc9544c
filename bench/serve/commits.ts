// The two-commit mode (issue 33): the server as deployed (src/cli/serve.ts, default configuration: request logs,
// usage metering, events, limits, metrics) from the working tree and from another commit (a git worktree), beside a
// bare node:http server sending the same bytes, on the same catalog. Each round starts every server afresh, in an
// order that rotates, measures each of them once (the order rotating too) and stops them: every ratio is taken
// within a round, and its median and range over the rounds are reported. --revs adds commits to the same rounds
// (how the regression of issue 33 was bisected).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SERVER_NODE_FLAGS } from "../../src/serve/http/server.ts";
import { expectOk, replayableHeaders } from "../lib/check.ts";
import { fmtX, renderTable, starvedWarnings, verdict, note, errorsVerdict } from "../lib/report.ts";
import type { Table, Verdict } from "../lib/report.ts";
import { medianRun } from "../lib/rounds.ts";
import type { Run } from "../lib/rounds.ts";
import { startDeployedOn } from "../lib/servers.ts";
import type { ServerChild } from "../lib/servers.ts";
import { runWrk } from "../lib/wrk.ts";
import { checkoutRevision, mergeBase, prepareRevision } from "../lib/worktree.ts";
import type { Revision } from "../lib/worktree.ts";
import { HOST } from "./context.ts";
import type { ServeBench } from "./context.ts";
import type { BareRoute } from "./server-child.ts";

/** The working tree against the base, as deployed: below this median ratio of req/s the line says FAIL. */
const TARGET = 0.97;
const METRICS_TOKEN = "bench-metrics-token-0123456789";

export interface CommitsOptions {
  /** The base commit; null: `git merge-base HEAD main`. */
  base: string | null;
  /** More commits measured in the same rounds, each against bare. */
  revs: readonly string[];
  /** Request logs on, off, or both (each a server of its own). */
  logs: readonly ("on" | "off")[];
  /** Leave the worktrees for the next run (bisecting): `git worktree remove` them yourself. */
  keepWorktrees: boolean;
}

interface Subject {
  label: string;
  root: string;
  snap: { dataDir: string; keysFile: string; key: string };
}

/** The median and the range of a list of ratios, as "1.02x (0.98-1.05)". */
function spread(list: readonly number[]): string {
  if (list.length === 0) return "-";
  const sorted = [...list].sort((a, b) => a - b);
  const med = sorted[Math.floor((sorted.length - 1) / 2)]!;
  return `${fmtX(med)} (${sorted[0]!.toFixed(2)}-${sorted.at(-1)!.toFixed(2)})`;
}
const medianOf = (list: readonly number[]) => [...list].sort((a, b) => a - b)[Math.floor((list.length - 1) / 2)];

/** Per round, `a`'s figure over `b`'s (the rounds both have). */
function perRound(a: readonly Run[], b: readonly Run[], figure: (r: Run) => number | undefined): number[] {
  return a.flatMap((x, i) => {
    const [p, q] = [figure(x), b[i] && figure(b[i])];
    return p !== undefined && q ? [p / q] : [];
  });
}

export async function compareCommits(
  b: ServeBench,
  at: { repoRoot: string; cores: { server: number; wrk: number } | null },
  c: CommitsOptions,
): Promise<{ text: string; verdicts: Verdict[] }> {
  const { o, snap, log } = b;
  const baseRev = c.base ?? (await mergeBase(at.repoRoot));
  const revisions: Revision[] = [];
  const children: ServerChild[] = [];
  try {
    for (const rev of [baseRev, ...c.revs]) revisions.push(await checkoutRevision(at.repoRoot, rev, log));
    const subjects: Subject[] = [{ label: "working tree", root: at.repoRoot, snap }];
    for (const r of revisions) {
      log(`${r.short}: building the same catalog into a snapshot with its own code ...`);
      const dir = join(b.workDir, `rev-${r.short}`);
      const built = await prepareRevision(r, join(b.workDir, "catalog"), dir, "https://api.example.test");
      subjects.push({ label: r.short, root: r.root, snap: built });
    }
    const target = (s: Subject) => `${snap.product.path}?apikey=${s.snap.key}`;
    const streamName = (s: Subject, logs: "on" | "off") => `${s.label}${c.logs.length > 1 ? `, logs ${logs}` : ""}`;
    const wrkOptions = { core: at.cores?.wrk ?? null, connections: o.connections, headers: {} };
    const startSubject = async (s: Subject, logs: "on" | "off", round: number) => {
      const env = { LOG_REQUESTS: logs === "on" ? "1" : "0", METRICS_TOKEN };
      const name = `deployed-${s.label.replace(/\W+/g, "-")}-logs-${logs}-${round + 1}`;
      const child = await startDeployedOn(s.snap, {
        core: at.cores?.server ?? null,
        cwd: s.root,
        nodeArgs: SERVER_NODE_FLAGS,
        workDir: b.workDir,
        name,
        host: HOST,
        env,
      });
      children.push(child);
      await runWrk(`http://${HOST}:${child.port}${target(s)}`, { ...wrkOptions, duration: o.startupWarmup });
      return child;
    };

    const runs = new Map<string, Run[]>();
    let reference: Buffer | null = null;
    let routes: BareRoute[] | null = null;
    const differs = new Set<string>();
    for (let round = 0; round < o.rounds; round++) {
      log(`round ${round + 1}/${o.rounds} of the commits: starting ${subjects.length * c.logs.length + 1} servers ...`);
      const started = new Map<string, { child: ServerChild; url: string }>();
      const jobs = subjects.flatMap((s) => c.logs.map((logs) => ({ s, logs })));
      // Which server starts first rotates by round: of servers started one after another, the first measured up to
      // 6% slower here (bench/serve/metering.ts). Bare replays the working tree's bytes: started after it in round 1.
      const order = [...jobs.slice(round % jobs.length), ...jobs.slice(0, round % jobs.length)];
      const startBare = async () => {
        // The working tree's bytes and headers, fetched once (in round 1, where it has been started by then).
        const ours = started.get(streamName(subjects[0]!, c.logs[0]!))!;
        const body = async (headers: Record<string, string>, name: string) => {
          const res = await b.get(ours.url, headers);
          const file = join(b.workDir, `commits-bare-${name}`);
          await writeFile(file, res.body);
          return { file, headers: replayableHeaders(res) };
        };
        const url = target(subjects[0]!);
        routes ??= [{ url, identity: await body({}, "id"), br: await body({ "Accept-Encoding": "br" }, "br") }];
        const child = await b.start(`bare-commits-${round + 1}`, { mode: "bare", host: HOST, port: 0, routes }, url);
        started.set("bare", { child, url: `http://${HOST}:${child.port}${url}` });
      };
      // Bare goes last in round 1 (it replays what the working tree sent then), elsewhere in the order after that.
      const bareAt = round === 0 ? order.length : round % (order.length + 1);
      for (let i = 0; i <= order.length; i++) {
        if (i === bareAt) await startBare();
        const job = order[i];
        if (!job) continue;
        const child = await startSubject(job.s, job.logs, round);
        started.set(streamName(job.s, job.logs), { child, url: `http://${HOST}:${child.port}${target(job.s)}` });
      }
      for (const [name, { url }] of started) {
        const res = await b.get(url);
        expectOk(res, `${name} product detail`, "identity");
        reference ??= res.body;
        if (!res.body.equals(reference)) differs.add(`${name}: ${res.body.length} bytes`);
      }
      const streams = [...started].map(([name, { child, url }]) => ({ name, url, pid: child.pid, headers: {} }));
      const label = `commits [round ${round + 1}/${o.rounds}]`;
      for (const [name, r] of await b.measure(streams, { rounds: 1, offset: round, label }))
        runs.set(name, [...(runs.get(name) ?? []), r]);
      for (const [name, { child }] of [...started].reverse()) {
        if (name === "bare") await b.stop(child);
        else {
          children.splice(children.indexOf(child), 1);
          await child.stop();
        }
      }
    }

    const rps = (x: Run) => x.r.requestsPerSec;
    const cpu = (x: Run) => x.cpu;
    const bare = runs.get("bare")!;
    const names = subjects.flatMap((s) => c.logs.map((logs) => streamName(s, logs)));
    const t: Table = {
      columns: ["server", "", "ours/bare req/s", "bare/ours CPU"],
      groups: [...names, "bare"].map((name) => {
        const list = runs.get(name)!;
        const ratios =
          name === "bare"
            ? undefined
            : ([medianOf(perRound(list, bare, rps)) ?? null, medianOf(perRound(bare, list, cpu)) ?? null] as const);
        return {
          label: name,
          bytes: reference?.length,
          rows: [{ name: "", run: medianRun(list), ...(ratios && { ratios }) }],
        };
      }),
      notes: [
        "  each server: src/cli/serve.ts as npm run serve runs it (default configuration: request logs as named, usage",
        "    metering into <its data dir>/portal.db, events, rate limits, metrics with a token), NODE_ENV=production,",
        `    node ${SERVER_NODE_FLAGS.join(" ")} for every commit; bare: node:http replaying the working tree's bytes.`,
        "  req/s and CPU: the median round's; the ratios are taken within each round, their median over the rounds.",
        ...[...differs].map(
          (d) => `  WARNING: body differs from the working tree's: ${d} (the commits render it differently)`,
        ),
      ],
    };
    const lines: string[] = [];
    const verdicts: Verdict[] = [];
    for (const logs of c.logs) {
      const [w, base] = [runs.get(streamName(subjects[0]!, logs))!, runs.get(streamName(subjects[1]!, logs))!];
      const ratio = perRound(w, base, rps);
      const text = `two commits, as deployed, logs ${logs}, product detail (identity), ${o.rounds} rounds: working tree/${subjects[1]!.label} req/s ${spread(ratio)}, CPU ${spread(perRound(base, w, cpu))}; working tree/bare ${spread(perRound(w, bare, rps))}; ${subjects[1]!.label}/bare ${spread(perRound(base, bare, rps))}`;
      lines.push(text);
      verdicts.push(verdict((medianOf(ratio) ?? 0) >= TARGET, `${text} (target: working tree/base >= ${TARGET}x)`));
      for (const s of subjects.slice(2)) {
        const list = runs.get(streamName(s, logs))!;
        verdicts.push(
          ...note(
            "info",
            `${s.label}, logs ${logs}: ${s.label}/bare req/s ${spread(perRound(list, bare, rps))}, bare/${s.label} CPU ${spread(perRound(bare, list, cpu))}`,
          ),
        );
      }
    }
    verdicts.push(...starvedWarnings(t, "measurement(s)"), errorsVerdict(t, "in the commits' measurements (all 200s)"));
    const which = revisions.map((r) => `${r.short} = ${r.name} (${r.root})`).join(", ");
    return { text: `commits: working tree = ${at.repoRoot}; ${which}\n\n${renderTable(t)}`, verdicts };
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
    if (!c.keepWorktrees)
      for (const r of revisions) await r.remove().catch((err: unknown) => log(`${r.root}: ${String(err)}`));
  }
}
