// The limits' primitive on both databases: attempts sent at once take at most the rule's count, the rest are refused
// under a lock, and the count starts again when the lock ends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrations.ts";
import { returnAttempt, takeAttempt } from "../../src/portal/store/throttle.ts";
import { bothDatabases, startPostgres } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";

let postgres: PostgresServer;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

describe.each(bothDatabases(() => postgres))("takeAttempt on $name", ({ url }) => {
  const rule = { failures: 10, windowMs: 60_000, lockMs: 120_000 };
  const now = Date.parse("2026-11-27T10:00:00Z");

  it("lets 10 of 100 attempts sent at once through, and locks the key for the rest", async () => {
    const db = await openDatabase(await url());
    try {
      await migrate(db, now);
      const waits = await Promise.all(Array.from({ length: 100 }, () => takeAttempt(db, "k", rule, now)));
      expect(waits.filter((w) => w === 0)).toHaveLength(10);
      expect(new Set(waits.filter((w) => w > 0))).toEqual(new Set([120]));
      expect(await takeAttempt(db, "k", rule, now + 119_000)).toBe(1); // still locked, not extended
      expect(await takeAttempt(db, "k", rule, now + 120_000)).toBe(0); // the lock ended: a new count
      const again = await Promise.all(Array.from({ length: 20 }, () => takeAttempt(db, "k", rule, now + 120_001)));
      expect(again.filter((w) => w === 0)).toHaveLength(9);
    } finally {
      await db.close();
    }
  });

  it("starts a new count when the window ends, and gives back a returned attempt", async () => {
    const db = await openDatabase(await url());
    try {
      await migrate(db, now);
      for (let i = 0; i < 10; i++) expect(await takeAttempt(db, "w", rule, now)).toBe(0);
      await returnAttempt(db, "w");
      expect(await takeAttempt(db, "w", rule, now + 1)).toBe(0); // the returned one
      expect(await takeAttempt(db, "w", rule, now + 2)).toBe(120);
      expect(await takeAttempt(db, "x", rule, now)).toBe(0); // keys are apart
      for (let i = 0; i < 10; i++) expect(await takeAttempt(db, "y", rule, now)).toBe(0);
      expect(await takeAttempt(db, "y", rule, now + 60_000)).toBe(0); // the window ended before the 11th
    } finally {
      await db.close();
    }
  });
});
