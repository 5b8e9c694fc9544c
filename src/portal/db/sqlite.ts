// The portal's embedded database: a SQLite file through @libsql/client (a prebuilt binary, on every Node we support).
import { createClient } from "@libsql/client";
import type { InValue } from "@libsql/client";
import { pathToFileURL } from "node:url";
import type { PortalDatabase, Row, SqlValue } from "./database.ts";

const toRow = (row: Record<string, unknown>): Row => {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === "bigint" ? Number(v) : (v as SqlValue);
  return out;
};

/** Opens (creating it if need be) the SQLite database file at `path`, with WAL and foreign keys on. */
export async function openSqlite(path: string): Promise<PortalDatabase> {
  const client = createClient({ url: pathToFileURL(path).href, intMode: "number" });
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute("PRAGMA busy_timeout = 5000");
  const args = (params: SqlValue[] = []) => params as InValue[];
  return {
    dialect: "sqlite",
    async all(sql, params) {
      const result = await client.execute({ sql, args: args(params) });
      return result.rows.map((r) => toRow(r as unknown as Record<string, unknown>));
    },
    async run(sql, params) {
      return (await client.execute({ sql, args: args(params) })).rowsAffected;
    },
    async batch(statements) {
      await client.batch(
        statements.map((s) => ({ sql: s.sql, args: args(s.params) })),
        "write",
      );
    },
    async transaction(work) {
      const tx = await client.transaction("write");
      try {
        const result = await work({
          all: async (sql, params) =>
            (await tx.execute({ sql, args: args(params) })).rows.map((r) =>
              toRow(r as unknown as Record<string, unknown>),
            ),
          run: async (sql, params) => (await tx.execute({ sql, args: args(params) })).rowsAffected,
        });
        await tx.commit();
        return result;
      } finally {
        tx.close(); // rolls back what was not committed
      }
    },
    exclusive: (work) => work(),
    close: () => Promise.resolve(client.close()),
  };
}
