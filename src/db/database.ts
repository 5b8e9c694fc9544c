// The portal's database: one small interface, with SQLite (an embedded file, the default) and PostgreSQL behind it.

/** A value bound to a `?` placeholder. */
export type SqlValue = string | number | null;

/** One statement and its parameters, written with `?` placeholders (each backend rewrites them as it needs). */
interface Statement {
  sql: string;
  params?: SqlValue[];
}

/** A row as the database returns it: column name to value (integers as numbers, text as strings). */
export type Row = Record<string, SqlValue>;

/** Reading and writing inside a transaction. */
export type Queries = Pick<PortalDatabase, "all" | "run">;

/**
 * What the portal asks of a database. The SQL it is given is the common part of SQLite's and PostgreSQL's dialects
 * (TEXT, BIGINT, `ON CONFLICT ... DO UPDATE`, `RETURNING`), so every query is written once.
 */
export interface PortalDatabase {
  /** `sqlite` or `postgres`. */
  readonly dialect: "sqlite" | "postgres";
  /** Runs a query and returns its rows (those of `RETURNING` too). */
  all(sql: string, params?: SqlValue[]): Promise<Row[]>;
  /** Runs a statement and returns the number of rows it changed. */
  run(sql: string, params?: SqlValue[]): Promise<number>;
  /** Runs statements in one transaction: all of them or none. */
  batch(statements: Statement[]): Promise<void>;
  /**
   * Runs `work` in one transaction, which it reads and writes through `tx`: committed when `work` resolves, rolled
   * back when it throws. For writes that depend on what the same transaction read (an idempotent hand-over).
   */
  transaction<T>(work: (tx: Queries) => Promise<T>): Promise<T>;
  /** Runs `work` while holding the database's migration lock (PostgreSQL: an advisory lock; SQLite: none needed). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The first row of a query, or undefined. */
export async function first(
  db: Pick<PortalDatabase, "all">,
  sql: string,
  params?: SqlValue[],
): Promise<Row | undefined> {
  return (await db.all(sql, params))[0];
}

/** Opens the database `url` names: `postgres://...` (or `postgresql://`) for PostgreSQL, else a SQLite file path. */
export async function openDatabase(url: string): Promise<PortalDatabase> {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const { openPostgres } = await import("./postgres.ts");
    return openPostgres(url);
  }
  const { openSqlite } = await import("./sqlite.ts");
  return openSqlite(url);
}
