// The portal's database on PostgreSQL (DATABASE_URL=postgres://...), through the pg package's pool.
import pg from "pg";
import type { PortalDatabase, Row, SqlValue } from "./database.ts";

/** An arbitrary constant naming the portal's migration lock among PostgreSQL's advisory locks. */
const MIGRATION_LOCK = 7_302_022;
const INT8_OID = 20;

/** `?` placeholders as PostgreSQL's `$1, $2...` (the portal's SQL has no `?` inside literals). */
function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Connects a pool to `url`; BIGINT columns (the times, in ms) come back as numbers. */
export async function openPostgres(url: string): Promise<PortalDatabase> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 5,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary"): unknown =>
        oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection the server ends (a restart, a failover) is dropped by the pool, which opens another for the
  // next query; without a listener its error would end the process. Errors of queries reach their callers.
  pool.on("error", () => {});
  // Fail at start-up, not on the first request, when the database cannot be reached.
  (await pool.connect()).release();
  const query = async (sql: string, params: SqlValue[] = []) => pool.query(numberPlaceholders(sql), params);
  return {
    dialect: "postgres",
    async all(sql, params) {
      return (await query(sql, params)).rows as Row[];
    },
    async run(sql, params) {
      return (await query(sql, params)).rowCount ?? 0;
    },
    async batch(statements) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        for (const s of statements) await client.query(numberPlaceholders(s.sql), s.params ?? []);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await work({
          all: async (sql, params = []) => (await client.query(numberPlaceholders(sql), params)).rows as Row[],
          run: async (sql, params = []) => (await client.query(numberPlaceholders(sql), params)).rowCount ?? 0,
        });
        await client.query("COMMIT");
        return result;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async exclusive(work) {
      const client = await pool.connect();
      try {
        await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
        try {
          return await work();
        } finally {
          await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
        }
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
