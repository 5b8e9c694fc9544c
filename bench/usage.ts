// `npm run bench -- usage [--keys 10000] [--batches 12] [--servers 1] [--accounts 1000]`: the usage store's write
// load (issue 23) with that many active keys. Every server hands over one batch every USAGE_FLUSH_MS (5 s): one row per
// key that made a request, which the store adds to four tables (per minute, per hour, per day, last use). Measured on
// both stores, side by side in one run: SQLite (a file in a temp dir, as `npm start` has it) and a real PostgreSQL
// (Debian's, started here on a free loopback port). Reports each batch's time, the rows written a second it sustains,
// and the share of each 5 s period the store is busy at 10,000 keys (the target: well under 100%, so that hand-overs
// never queue). Then the operator's page of accounts busiest over the last 24 hours, with --accounts accounts of one
// key each that made requests in every minute of those 24 hours (1,440 minutes a key): the time of its first page.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startPostgresIn } from "../scripts/lib/postgres-server.ts";
import { freePort } from "../scripts/lib/server-child.ts";
import { DEFAULT_USAGE_FLUSH_MS } from "../src/config/defaults.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrations.ts";
import type { UsageBatch } from "../src/usage/meter.ts";
import { createAccount } from "../src/portal/store/accounts.ts";
import { trafficWindow } from "../src/portal/usage-reads.ts";
import { accountsByTraffic, countsOnDay, DAY_MS, recordBatch } from "../src/usage/store.ts";
import { fmtInt, fmtMs } from "./lib/report.ts";

const { values: opts } = parseArgs({
  options: {
    keys: { type: "string", default: "10000" },
    batches: { type: "string", default: "12" },
    servers: { type: "string", default: "1" },
    accounts: { type: "string", default: "1000" },
  },
});
const keys = Number(opts.keys);
const batches = Number(opts.batches);
const servers = Number(opts.servers);
const accounts = Number(opts.accounts);
const T0 = Date.parse("2026-11-22T17:00:00Z");

/** Batch `i` of server `s`: every key, one row each, in the minute of the batch (a new minute every 12 batches). */
function batchOf(s: number, i: number): UsageBatch {
  const now = T0 + i * DEFAULT_USAGE_FLUSH_MS;
  const minute = now - (now % 60_000);
  const rows = Array.from({ length: keys }, (_, k) => ({
    key: `partner-${k}`,
    minute,
    route: "sale_list" as const,
    counts: [5, 2, 1, 0, 0, 12_345],
    last: now,
  }));
  return { id: `bench-${s}-${i}`, rows };
}

async function measure(name: string, url: string): Promise<string> {
  const db = await openDatabase(url);
  try {
    await migrate(db, T0);
    const times: number[] = [];
    for (let i = 0; i < batches; i++)
      for (let s = 0; s < servers; s++) {
        const batch = batchOf(s, i);
        const started = performance.now();
        await recordBatch(db, batch, T0);
        times.push(performance.now() - started);
      }
    const check = await countsOnDay(db, ["partner-0"], T0);
    if (check.ok !== 5 * batches * servers) throw new Error(`${name}: partner-0 has ${check.ok} requests stored`);
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const max = sorted.at(-1)!;
    const rowsPerBatch = keys * 4;
    const busy = (median * servers) / DEFAULT_USAGE_FLUSH_MS;
    return [
      name.padEnd(11),
      fmtMs(median).padStart(9),
      fmtMs(max).padStart(9),
      fmtInt((rowsPerBatch / median) * 1000).padStart(13),
      fmtInt((rowsPerBatch * servers * 1000) / DEFAULT_USAGE_FLUSH_MS).padStart(13),
      `${(busy * 100).toFixed(1)}%`.padStart(9),
    ].join("  ");
  } finally {
    await db.close();
  }
}

/** The operator's first page of accounts by their requests in the last 24 hours, on a day of every minute used. */
async function busiestPage(name: string, url: string): Promise<string> {
  const db = await openDatabase(url);
  try {
    await migrate(db, T0);
    const now = T0 + DAY_MS;
    const names: string[] = [];
    for (let a = 0; a < accounts; a++) {
      const made = await createAccount(db, { email: `a${a}@example.test`, partner: `a${a}`, password: "x" }, T0);
      names.push(`p.${made!.id}.k`);
      await db.run(
        "INSERT INTO api_keys (id, account_id, file_name, label, first4, last4, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [`k${a}`, made!.id, names[a]!, "k", "abcd", "wxyz", T0],
      );
    }
    const filling = performance.now();
    for (let m = 0; m < 1_440; m++) {
      const minute = T0 + m * 60_000;
      const rows = names.map((key, a) => ({
        key,
        minute,
        route: "sale_list" as const,
        counts: [1 + (a % 7), 0, 0, 0, 0, 100],
        last: minute,
      }));
      await recordBatch(db, { id: `order-${m}`, rows }, now);
    }
    const filled = performance.now() - filling;
    const { step, from, to } = trafficWindow("24h", now);
    const times: number[] = [];
    let first = "";
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const page = await accountsByTraffic(db, step, from, to, 50, 0);
      times.push(performance.now() - started);
      first = `${page.length} accounts, the busiest with ${fmtInt(page[0]?.requests ?? 0)} requests`;
    }
    const median = [...times].sort((a, b) => a - b)[2]!;
    return `${name.padEnd(11)}  ${fmtMs(median).padStart(9)} ms  (${first}; ${fmtInt(accounts * 1_440)} minute rows, written in ${(filled / 1000).toFixed(1)} s)`;
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "fsa-bench-usage-"));
  // Its own temp dir: PostgreSQL runs as another user when we are root, and may not enter a 0700 parent.
  const pgDir = await mkdtemp(join(tmpdir(), "fsa-bench-pg-"));
  const postgres = await startPostgresIn(pgDir, await freePort());
  try {
    console.log(
      `usage store write load: ${fmtInt(keys)} active keys, ${servers} server(s) each handing over one batch every ${DEFAULT_USAGE_FLUSH_MS / 1000} s (${fmtInt(keys)} rows, written to 4 tables), ${batches} batches each`,
    );
    console.log("store        batch ms  max ms     rows/s (cap)  rows/s (need)  busy/5 s");
    console.log(await measure("SQLite", join(dir, "portal.db")));
    console.log(await measure("PostgreSQL", postgres.url));
    console.log(
      "rows/s (cap): rows a second the store takes at the median batch time; (need): what the keys' hand-overs write; busy: share of each period the store spends on them",
    );
    console.log(`\nthe operator's accounts by requests in the last 24 hours (first page of 50; median of 5 reads)`);
    console.log(await busiestPage("SQLite", join(dir, "order.db")));
    const pg = await openDatabase(postgres.url);
    await pg.run("CREATE DATABASE busiest");
    await pg.close();
    console.log(await busiestPage("PostgreSQL", postgres.url.replace(/\/postgres$/, "/busiest")));
  } finally {
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(pgDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
