// The portal's database layer, the same cases against both backends: SQLite in a temp file and a real PostgreSQL
// started by the test. Migrations (recorded, applied once, a newer schema refused), accounts, sessions, tokens,
// the sign-in throttle, the audit trail, and the full sign-up-to-key flow over HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.ts";
import type { PortalDatabase } from "../../src/db/database.ts";
import { MIGRATIONS, SchemaVersionError, migrate } from "../../src/db/migrations.ts";
import {
  createAccount,
  deleteAccount,
  findAccount,
  findAccountByEmail,
  updateAccount,
} from "../../src/portal/store/accounts.ts";
import { listAudit, recordAudit } from "../../src/portal/store/audit.ts";
import { createSession, endAllSessions, resumeSession } from "../../src/portal/store/sessions.ts";
import { lockedFor, takeAttempt } from "../../src/portal/store/throttle.ts";
import { consumeToken, issueToken, peekToken } from "../../src/portal/store/tokens.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

const backends = bothDatabases(() => postgres);

describe.each(backends)("the portal database on $name", ({ name, url }) => {
  let db: PortalDatabase;
  const now = Date.parse("2026-11-22T17:00:00Z");
  beforeAll(async () => {
    db = await openDatabase(await url());
    expect(db.dialect).toBe(name === "SQLite" ? "sqlite" : "postgres");
  });
  afterAll(async () => {
    await db?.close();
  });

  it("applies the migrations once, records them, and refuses a schema newer than the code", async () => {
    expect(await migrate(db, now)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(await migrate(db, now + 1)).toEqual([]);
    const recorded = await db.all("SELECT version, name, applied FROM schema_migrations ORDER BY version");
    expect(recorded).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied: now })));
    const next = {
      version: MIGRATIONS.length + 1,
      name: "test",
      statements: ["CREATE TABLE test_only (id TEXT PRIMARY KEY)"],
    };
    await db.batch([{ sql: "INSERT INTO schema_migrations (version, name, applied) VALUES (99, 'future', 0)" }]);
    await expect(migrate(db, now, [...MIGRATIONS, next])).rejects.toThrow(SchemaVersionError);
    await db.run("DELETE FROM schema_migrations WHERE version = 99");
  });

  it("migrates a version 1 database to the operator pages' schema, keeping its accounts", async () => {
    // A database of its own: SQLite, a new file; PostgreSQL, a new database on the test's server.
    if (name === "PostgreSQL") await db.run("CREATE DATABASE portal_v1");
    const old = await openDatabase(
      name === "PostgreSQL" ? postgres.url.replace(/\/postgres$/, "/portal_v1") : await url(),
    );
    try {
      expect(await migrate(old, now, MIGRATIONS.slice(0, 1))).toEqual([1]);
      await old.run(
        "INSERT INTO accounts (id, email, partner, password, created) VALUES ('v1a', 'v1@x.test', 'P', 'h', 1)",
      );
      expect(await migrate(old, now)).toEqual(MIGRATIONS.slice(1).map((m) => m.version));
      expect(await findAccountByEmail(old, "v1@x.test")).toMatchObject({ status: "active", rate: null, burst: null });
      await updateAccount(old, "v1a", { rate: 2.5, burst: 10 });
      expect(await findAccountByEmail(old, "v1@x.test")).toMatchObject({ rate: 2.5, burst: 10 });
    } finally {
      await old.close();
    }
  });

  it("rolls a failing batch back entirely", async () => {
    await expect(
      db.batch([
        { sql: "INSERT INTO audit (id, account_id, at, event, detail, address) VALUES ('a1', 'x', 1, 'e', '', '')" },
        { sql: "INSERT INTO audit (id, account_id, at, event, detail, address) VALUES ('a1', 'x', 1, 'e', '', '')" },
      ]),
    ).rejects.toThrow();
    expect(await db.all("SELECT id FROM audit WHERE id = 'a1'")).toEqual([]);
  });

  it("keeps accounts unique by email whatever its case, and updates them", async () => {
    const made = await createAccount(db, { email: "Case@Example.test", partner: "P", password: "h" }, now);
    expect(made?.email).toBe("case@example.test");
    expect(await createAccount(db, { email: "case@EXAMPLE.test", partner: "Q", password: "h" }, now)).toBeNull();
    await updateAccount(db, made!.id, { verified: now, role: "admin" });
    expect(await findAccountByEmail(db, "CASE@example.test")).toMatchObject({ verified: now, role: "admin" });
    const other = await createAccount(db, { email: "other@example.test", partner: "O", password: "h" }, now);
    expect(await updateAccount(db, other!.id, { email: "case@example.test" })).toBe(false);
  });

  it("expires sessions when idle and at their absolute limit, and ends them all", async () => {
    const account = await createAccount(db, { email: "s@example.test", partner: "S", password: "h" }, now);
    const limits = { idleMs: 1000, absoluteMs: 200_000 };
    const id = await createSession(db, account!.id, now, account!.id);
    expect(await resumeSession(db, id, now + 999, limits)).toEqual({ accountId: account!.id, orgId: account!.id });
    expect(await resumeSession(db, id, now + 999 + 1000, limits)).toBeNull();
    const long = await createSession(db, account!.id, now, account!.id);
    const few = { idleMs: 100_000, absoluteMs: 150_000 };
    for (let t = now; t < now + 150_000; t += 60_000)
      expect((await resumeSession(db, long, t, few))?.accountId).toBe(account!.id);
    expect(await resumeSession(db, long, now + 150_000, few)).toBeNull();
    const a = await createSession(db, account!.id, now, account!.id);
    const b = await createSession(db, account!.id, now, account!.id);
    await endAllSessions(db, account!.id);
    expect([await resumeSession(db, a, now, limits), await resumeSession(db, b, now, limits)]).toEqual([null, null]);
    expect(await db.all("SELECT id_hash FROM sessions WHERE id_hash = ?", [a])).toEqual([]); // stored hashed
  });

  it("uses a token once, and not after it expires", async () => {
    const account = await createAccount(db, { email: "t@example.test", partner: "T", password: "h" }, now);
    const token = await issueToken(db, account!, "reset", "t@example.test", now);
    expect(await consumeToken(db, token, "verify", now)).toBeNull();
    expect(await consumeToken(db, token, "reset", now)).toEqual({ account, email: "t@example.test" });
    expect(await consumeToken(db, token, "reset", now)).toBeNull();
    const late = await issueToken(db, account!, "reset", "t@example.test", now);
    expect(await consumeToken(db, late, "reset", now + 3600_000)).toBeNull();
  });

  it("kills a token when its account's password, email or verification changes, wherever the change is made", async () => {
    const account = (await createAccount(db, { email: "stamp@example.test", partner: "S", password: "h1" }, now))!;
    const changes = [{ password: "h2" }, { email: "stamp2@example.test" }, { verified: now }] as const;
    for (const change of changes) {
      const before = (await findAccount(db, account.id))!;
      const token = await issueToken(db, before, "reset", before.email, now);
      await updateAccount(db, account.id, change);
      expect(await peekToken(db, token, "reset", now)).toBe(false);
      expect(await consumeToken(db, token, "reset", now)).toBeNull();
    }
    const unchanged = (await findAccount(db, account.id))!;
    const token = await issueToken(db, unchanged, "reset", unchanged.email, now);
    await updateAccount(db, account.id, { rate: 5 }); // not a credential
    expect(await peekToken(db, token, "reset", now)).toBe(true);
  });

  it("locks a throttle key past its count within the window, and forgets attempts once the window has passed", async () => {
    const rule = { failures: 3, windowMs: 10_000, lockMs: 60_000 };
    expect(await takeAttempt(db, "k1", rule, now)).toBe(0);
    expect(await takeAttempt(db, "k1", rule, now + 1)).toBe(0);
    expect(await takeAttempt(db, "k1", rule, now + 20_000)).toBe(0); // a new window: the count starts again
    expect(await takeAttempt(db, "k1", rule, now + 20_001)).toBe(0);
    expect(await takeAttempt(db, "k1", rule, now + 20_002)).toBe(0); // the 3rd of this window
    expect(await lockedFor(db, ["k1"], now + 20_002)).toBe(0);
    expect(await takeAttempt(db, "k1", rule, now + 20_003)).toBe(60); // past the count: refused, and locked
    expect(await lockedFor(db, ["k1", "other"], now + 20_003)).toBe(60);
    expect(await lockedFor(db, ["k1"], now + 80_003)).toBe(0);
  });

  it("keeps an audit trail per account, newest first, and deletes an account with everything it had", async () => {
    const account = await createAccount(db, { email: "a@example.test", partner: "A", password: "h" }, now);
    const id = account!.id;
    await recordAudit(db, id, { at: now, event: "signin", detail: "", address: "192.0.2.1" });
    await recordAudit(db, id, { at: now + 1, event: "key.created", detail: `"x" (abcd…wxyz)`, address: "::1" });
    expect((await listAudit(db, id)).map((e) => e.event)).toEqual(["key.created", "signin"]);
    await createSession(db, id, now, id);
    await deleteAccount(db, id);
    expect(await listAudit(db, id)).toEqual([]);
    expect(await db.all("SELECT * FROM sessions WHERE account_id = ?", [id])).toEqual([]);
    expect(await findAccountByEmail(db, "a@example.test")).toBeNull();
  });

  it("runs the portal over HTTP: sign up, verify, make a key", async () => {
    const portal = await startTestPortal(smtp, { databaseUrl: await url() });
    try {
      const client = new PortalClient(portal.url);
      await signUpAndVerify(client, smtp, { email: `http-${name.toLowerCase()}@example.test` });
      await client.get("/keys");
      const made = await client.post("/keys", { name: `on ${name}` });
      expect(made.text).toMatch(/value="[A-Za-z0-9]{32}"/);
      expect((await client.get("/keys")).text).toContain(`on ${name}`);
    } finally {
      await portal.close();
    }
  });
});
