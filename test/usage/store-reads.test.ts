// The portal's reads of usage, against both stores (SQLite in a temp file, a real PostgreSQL): the accounts ordered
// by the requests of all their keys (from the minutes for the last 24 hours, from the days for 30 days), each
// account's requests, and the spans and last uses the usage pages show.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.ts";
import type { PortalDatabase } from "../../src/db/database.ts";
import { migrate, MIGRATIONS } from "../../src/db/migrations.ts";
import { createAccount } from "../../src/portal/store/accounts.ts";
import { keysUse, readUsage, trafficWindow } from "../../src/portal/usage-reads.ts";
import type { PartnerKey } from "../../src/portal/partner-keys.ts";
import {
  accountsByTraffic,
  DAY_MS,
  HOUR_MS,
  lastUsed,
  MINUTE_MS,
  recordBatch,
  requestsOfAccounts,
} from "../../src/usage/store.ts";
import { T0 } from "../helpers/fixture.ts";
import { bothDatabases, startPostgres } from "../portal/postgres-server.ts";
import type { PostgresServer } from "../portal/postgres-server.ts";

let postgres: PostgresServer;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

const backends = bothDatabases(() => postgres);

const NOW = T0 * 1000 + 30 * MINUTE_MS + 12_345; // 17:30:12 on the fixture's day
const minute = (ms: number) => ms - (ms % MINUTE_MS);

describe.each(backends)("usage reads in $name", ({ url }) => {
  let db: PortalDatabase;
  /** Account IDs by name: quiet has no keys used, busy and steady have keys with known usage. */
  const ids: Record<string, string> = {};
  let batch = 0;
  /** Records `ok` 2xx and `limited` 429s of key `key` at `at`. */
  const record = (key: string, at: number, ok: number, limited = 0) =>
    recordBatch(
      db,
      {
        id: `t-${++batch}`,
        rows: [{ key, minute: minute(at), route: "sale_list", counts: [ok, 0, 0, limited, 0, 10], last: at }],
      },
      NOW,
    );

  beforeAll(async () => {
    db = await openDatabase(await url());
    await migrate(db, NOW);
    for (const name of ["quiet", "busy", "steady", "zed-none"]) {
      const made = await createAccount(db, { email: `${name}@example.test`, partner: name, password: "x" }, NOW);
      ids[name] = made!.id;
    }
    const key = (account: string, id: string) =>
      db.run(
        "INSERT INTO api_keys (id, account_id, file_name, label, first4, last4, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [id, ids[account]!, `p.${ids[account]}.${id}`, id, "abcd", "wxyz", NOW - 40 * DAY_MS],
      );
    await key("quiet", "q1");
    await key("busy", "b1");
    await key("busy", "b2");
    await key("steady", "s1");
    const name = (account: string, id: string) => `p.${ids[account]}.${id}`;
    // busy: 30 in the last 24 hours (two keys), nothing older; steady: 5 in the last hour, 100 ten days ago.
    await record(name("busy", "b1"), NOW - 2 * HOUR_MS, 20, 4);
    await record(name("busy", "b2"), NOW - 23 * HOUR_MS, 6);
    await record(name("steady", "s1"), NOW - 10 * MINUTE_MS, 5);
    await record(name("steady", "s1"), NOW - 10 * DAY_MS, 100);
    // A key no account owns (an operator's) and a minute just past the 24 hours: counted by neither order.
    await record("demo-operator", NOW - HOUR_MS, 1000);
    await record(name("quiet", "q1"), NOW - 24 * HOUR_MS - 2 * MINUTE_MS, 7);
    // In the same hour as that minute, but inside the 24 hours: counted (the span is exact to the minute).
    await record(name("quiet", "q1"), NOW - 24 * HOUR_MS + 5 * MINUTE_MS, 3);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("orders the accounts busiest first over the last 24 hours, then by email, the unused ones with 0", async () => {
    const { step, from, to } = trafficWindow("24h", NOW);
    expect(await accountsByTraffic(db, step, from, to, 10, 0)).toEqual([
      { accountId: ids.busy, requests: 30 },
      { accountId: ids.steady, requests: 5 },
      { accountId: ids.quiet, requests: 3 },
      { accountId: ids["zed-none"], requests: 0 },
    ]);
    // A page at a time.
    expect(await accountsByTraffic(db, step, from, to, 2, 1)).toEqual([
      { accountId: ids.steady, requests: 5 },
      { accountId: ids.quiet, requests: 3 },
    ]);
    expect(await requestsOfAccounts(db, [ids.quiet!, ids.steady!, ids.busy!], step, from, to)).toEqual(
      new Map([
        [ids.quiet, 3],
        [ids.steady, 5],
        [ids.busy, 30],
      ]),
    );
  });

  it("over 30 days, from the days: the older requests count, and order the accounts otherwise", async () => {
    const { step, from, to } = trafficWindow("30d", NOW);
    expect(step).toBe(DAY_MS);
    expect(await accountsByTraffic(db, step, from, to, 10, 0)).toEqual([
      { accountId: ids.steady, requests: 105 },
      { accountId: ids.busy, requests: 30 },
      { accountId: ids.quiet, requests: 10 },
      { accountId: ids["zed-none"], requests: 0 },
    ]);
    expect(await requestsOfAccounts(db, [], step, from, to)).toEqual(new Map());
  });

  it("reads a span's every period up to the current one, with totals; and each key's last use and idleness", async () => {
    const busy = [`p.${ids.busy}.b1`, `p.${ids.busy}.b2`];
    const hours = await readUsage(db, busy, "48h", NOW);
    expect(hours.points).toHaveLength(48);
    expect(hours.points.at(-1)!.at).toBe(T0 * 1000); // 17:00, the current hour
    expect(hours.points.at(-3)!.counts).toMatchObject({ ok: 20, limited: 4 });
    expect(hours.totals).toMatchObject({ ok: 26, limited: 4, client_error: 0, bytes: 20 });
    const days = await readUsage(db, [`p.${ids.steady}.s1`], "90d", NOW);
    expect(days.points).toHaveLength(90);
    expect(days.points.at(-1)!.at).toBe(NOW - (NOW % DAY_MS));
    expect(days.points.at(-11)!.counts.ok).toBe(100);
    expect(days.totals.ok).toBe(105);
    expect((await readUsage(db, [], "30d", NOW)).totals.ok).toBe(0);

    const key = (id: string, account: string, status: PartnerKey["status"], created: number): PartnerKey => ({
      id,
      name: `p.${ids[account]}.${id}`,
      label: id,
      first4: "abcd",
      last4: "wxyz",
      created,
      status,
    });
    const use = await keysUse(
      db,
      [
        key("s1", "steady", "active", NOW - 40 * DAY_MS),
        key("q1", "quiet", "active", NOW - 40 * DAY_MS),
        key("new", "quiet", "active", NOW - 29 * DAY_MS),
        key("old", "quiet", "active", NOW - 31 * DAY_MS),
        key("gone", "quiet", "revoked", NOW - 31 * DAY_MS),
      ],
      NOW,
    );
    expect(Object.fromEntries(use)).toEqual({
      s1: { last: NOW - 10 * MINUTE_MS, idle: false },
      q1: { last: NOW - 24 * HOUR_MS + 5 * MINUTE_MS, idle: false },
      new: { last: null, idle: false },
      old: { last: null, idle: true },
      gone: { last: null, idle: false },
    });
    // Used last 30 days ago: idle.
    const later = await keysUse(
      db,
      [key("q1", "quiet", "active", NOW - 40 * DAY_MS)],
      NOW + 29 * DAY_MS + 10 * MINUTE_MS,
    );
    expect(later.get("q1")!.idle).toBe(true);
  });
});

/** A database of its own: a new SQLite file, or a new database `db` on the test file's PostgreSQL. */
async function freshDatabase(name: string, url: () => Promise<string>, db = "before_hours"): Promise<PortalDatabase> {
  if (name === "SQLite") return openDatabase(await url());
  const server = await openDatabase(await url());
  await server.run(`CREATE DATABASE ${db}`);
  await server.close();
  return openDatabase((await url()).replace(/\/postgres$/, `/${db}`));
}

describe.each(backends)("usage counted before migration 4, in $name", ({ name: backend, url }) => {
  it("is read by the hour once migrated: the minutes kept are added up into hours", async () => {
    const db = await freshDatabase(backend, url);
    try {
      await migrate(
        db,
        NOW,
        MIGRATIONS.filter((m) => m.version <= 3),
      );
      // At schema 3 there are no organisations (migration 9): the account alone, as it was made then.
      const made = await createAccount(db, { email: "old@example.test", partner: "old", password: "x" }, NOW, false);
      const name = `p.${made!.id}.k`;
      await db.run(
        "INSERT INTO api_keys (id, account_id, file_name, label, first4, last4, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ["k", made!.id, name, "k", "abcd", "wxyz", NOW - DAY_MS],
      );
      // Minutes of three hours, one of them the first hour of the 24: 2 + 3 + 4 + 5 inside it, 1 just before it.
      for (const [at, ok] of [
        [NOW - 24 * HOUR_MS - MINUTE_MS, 1],
        [NOW - 24 * HOUR_MS + MINUTE_MS, 2],
        [NOW - 5 * HOUR_MS, 3],
        [NOW - 5 * HOUR_MS + MINUTE_MS, 4],
        [NOW - MINUTE_MS, 5],
      ] as const)
        await db.run(
          `INSERT INTO usage_minute (key_name, minute, ok, not_modified, client_error, limited, server_error, bytes)
           VALUES (?, ?, ?, 0, 0, 0, 0, 0)`,
          [name, minute(at), ok],
        );
      expect(
        await migrate(
          db,
          NOW,
          MIGRATIONS.filter((m) => m.version <= 4),
        ),
      ).toEqual([4]);
      const { step, from, to } = trafficWindow("24h", NOW);
      expect(await requestsOfAccounts(db, [made!.id], step, from, to)).toEqual(new Map([[made!.id, 14]]));
      expect((await db.all("SELECT COUNT(*) AS n FROM usage_hour WHERE key_name = ?", [name]))[0]!.n).toBe(3);
    } finally {
      await db.close();
    }
  });
});

describe.each(backends)("usage counted before migration 8 (by endpoint), in $name", ({ name: backend, url }) => {
  it("keeps every figure, under the endpoint `unknown`, and counts new requests by endpoint beside them", async () => {
    const db = await freshDatabase(backend, url, "before_routes");
    try {
      await migrate(
        db,
        NOW,
        MIGRATIONS.filter((m) => m.version <= 7),
      );
      const at = minute(NOW - 5 * MINUTE_MS);
      for (const [table, column, period] of [
        ["usage_minute", "minute", at],
        ["usage_hour", "hour", at - (at % HOUR_MS)],
        ["usage_day", "day", at - (at % DAY_MS)],
      ] as const)
        await db.run(
          `INSERT INTO ${table} (key_name, ${column}, ok, not_modified, client_error, limited, server_error, bytes)
           VALUES ('k', ?, 3, 1, 0, 0, 0, 99)`,
          [period],
        );
      await db.run("INSERT INTO usage_last (key_name, at) VALUES ('k', ?)", [NOW - 5 * MINUTE_MS]);
      expect(
        await migrate(
          db,
          NOW,
          MIGRATIONS.filter((m) => m.version <= 8),
        ),
      ).toEqual([8]);
      // The same batch a server hands over now: a product request and a search, in the minute before migration's.
      await recordBatch(
        db,
        {
          id: "after-8",
          rows: [
            { key: "k", minute: at, route: "product", counts: [2, 0, 1, 0, 0, 10], last: NOW - 4 * MINUTE_MS },
            { key: "k", minute: at, route: "search", counts: [1, 0, 0, 0, 0, 5], last: NOW - 4 * MINUTE_MS },
          ],
        },
        NOW,
      );
      const report = await readUsage(db, ["k"], "48h", NOW);
      expect(report.totals).toMatchObject({ ok: 6, not_modified: 1, client_error: 1, bytes: 114 });
      expect(Object.fromEntries(report.byRoute)).toMatchObject({
        unknown: { ok: 3, not_modified: 1, bytes: 99 },
        product: { ok: 2, client_error: 1, bytes: 10 },
        search: { ok: 1, bytes: 5 },
      });
      const days = await readUsage(db, ["k"], "30d", NOW);
      expect(days.totals).toMatchObject({ ok: 6, bytes: 114 });
      expect(days.byRoute.get("unknown")).toMatchObject({ ok: 3 });
      const { step, from, to } = trafficWindow("24h", NOW);
      const hours = await db.all("SELECT route, ok FROM usage_hour ORDER BY route");
      expect(hours.map((r) => [r.route, Number(r.ok)])).toEqual([
        ["product", 2],
        ["search", 1],
        ["unknown", 3],
      ]);
      expect((await accountsByTraffic(db, step, from, to, 10, 0)).length).toBe(0);
      expect(await lastUsed(db, ["k"])).toEqual(new Map([["k", NOW - 4 * MINUTE_MS]]));
    } finally {
      await db.close();
    }
  });
});
