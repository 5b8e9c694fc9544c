// The portal's embedded database: a SQLite file through libsql (better-sqlite3's interface on a prebuilt binary, on
// every Node we support; @libsql/client's own driver). Several openers share the file at once (the portal, each API
// worker's usage store thread, `npm start`'s demo account): every connection waits for another's lock (the busy
// timeout, set as each connection opens, before any statement), a new file appears already in WAL mode (the mode is
// set once, never by two openers at once), and the migrations run in one write transaction (exclusive), so that two
// openers never apply the same one. Statements are prepared once and kept (the last STATEMENTS_KEPT), not again at
// each query.
import Database from "libsql";
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { chmod, link, open, rm, stat } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { threadId } from "node:worker_threads";
import { boundedMemo } from "../bounded-memo.ts";
import type { PortalDatabase, Queries, Row, SqlValue } from "./database.ts";

/** How long a statement waits for another connection's lock before it fails with SQLITE_BUSY (ms). */
const BUSY_TIMEOUT_MS = 5_000;
/**
 * How long opening the file (and taking the migrations' lock) is tried again when it still meets SQLITE_BUSY, which
 * the busy timeout does not cover everywhere (a WAL file being recovered, the journal mode being changed) (ms).
 */
const OPEN_RETRY_MS = 30_000;
/** The database file, its -wal and its -shm: readable and writable by their owner only (hashes, emails, the trail). */
const FILE_MODE = 0o600;
/**
 * Prepared statements kept, by their SQL: the portal's queries are a few dozen texts, and those with a list of `?`
 * (IN lists, multi-row INSERTs) one per length. Preparing a statement again at each query cost as much as running it
 * (bench/webhooks.ts: a sale's 1,000 deliveries).
 */
const STATEMENTS_KEPT = 256;

type Connection = InstanceType<typeof Database>;
type Statement = ReturnType<Connection["prepare"]>;

const isBusy = (err: unknown) => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
};

/** Runs `work`, again after a pause while it fails with SQLITE_BUSY, for up to OPEN_RETRY_MS. */
async function retryBusy<T>(work: () => T | Promise<T>): Promise<T> {
  const deadline = Date.now() + OPEN_RETRY_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 500)) {
    try {
      return await work();
    } catch (err) {
      if (!isBusy(err) || Date.now() + pause > deadline) throw err;
      await delay(pause);
    }
  }
}

/**
 * Makes the database file, if there is none, already in WAL mode and with FILE_MODE (SQLite gives its -wal and -shm
 * the database file's mode): made under a name of its own, then linked into place, which fails if another opener was
 * first (its file is then used). So no opener ever sees the file before it is in WAL mode: openers that all switched
 * a new file to WAL at once failed with SQLITE_IOERR (each deleting the rollback journal another had deleted).
 */
async function createWalFile(path: string): Promise<void> {
  const made = `${path}.new-${process.pid}-${threadId}-${randomBytes(4).toString("hex")}`;
  try {
    await (await open(made, "wx", FILE_MODE)).close();
    const connection = new Database(made, { timeout: BUSY_TIMEOUT_MS });
    try {
      connection.exec("PRAGMA journal_mode = WAL"); // recorded in the file's header
    } finally {
      connection.close();
    }
    await link(made, path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
    });
  } finally {
    await Promise.all(["", "-wal", "-shm"].map((end) => rm(made + end, { force: true })));
  }
}

/** Makes the file if there is none; narrows a file (and its -wal and -shm) made before with a wider mode. */
async function prepareFile(path: string): Promise<void> {
  const modes = await Promise.all(
    [path, `${path}-wal`, `${path}-shm`].map((file) =>
      stat(file).then(
        (s) => ({ file, mode: s.mode & 0o777 }),
        (err: NodeJS.ErrnoException) => {
          if (err.code === "ENOENT") return null;
          throw err;
        },
      ),
    ),
  );
  if (!modes[0]) return createWalFile(path);
  for (const found of modes) if (found && found.mode & ~FILE_MODE) await chmod(found.file, found.mode & FILE_MODE);
}

/** A connection with the busy timeout, on a file in WAL mode. */
function connect(path: string): Connection {
  const connection = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    const [mode] = connection.prepare("PRAGMA journal_mode").all() as { journal_mode?: unknown }[];
    if (typeof mode?.journal_mode !== "string" || mode.journal_mode.toLowerCase() !== "wal")
      connection.exec("PRAGMA journal_mode = WAL");
    return connection;
  } catch (err) {
    connection.close();
    throw err;
  }
}

/** `work`'s answer, or its error, as a promise. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}

/** A kept statement, and for one that returns rows its columns: how many, and each name with its index. */
interface Kept {
  statement: Statement;
  columns: { width: number; named: [number, string][] } | null;
}

/** A statement's columns: their count, and each name with its index (a name repeated: its first, as SQLite's rows). */
function columnsOf(statement: Statement): { width: number; named: [number, string][] } {
  const all = statement.columns();
  const seen = new Set<string>();
  const named: [number, string][] = [];
  for (const [i, c] of all.entries())
    if (!seen.has(c.name)) {
      seen.add(c.name);
      named.push([i, c.name]);
    }
  return { width: all.length, named };
}

/** `connection`'s statements, prepared once and kept by SQL text (the least recently used dropped beyond `max`). */
function statementsOf(connection: Connection, max: number): (sql: string) => Kept {
  return boundedMemo(max, (sql) => {
    const statement = connection.prepare(sql);
    if (statement.reader) statement.raw(true);
    return { statement, columns: statement.reader ? columnsOf(statement) : null };
  });
}

/** Opens (creating it, owner-only, if need be) the SQLite database file at `path`, in WAL mode, foreign keys on. */
export async function openSqlite(path: string): Promise<PortalDatabase> {
  await prepareFile(path);
  const connection = await retryBusy(() => connect(path));
  const statement = statementsOf(connection, STATEMENTS_KEPT);
  /** The migrations' write transaction, which the statements `exclusive`'s work makes go through. */
  const held = new AsyncLocalStorage<true>();
  const serial = createSerial(held);
  const allNow = (sql: string, params: SqlValue[] = []): Row[] => {
    const kept = statement(sql);
    if (!kept.columns) {
      kept.statement.run(params);
      return [];
    }
    const rows = kept.statement.all(params) as SqlValue[][];
    // SQLite prepares a kept statement again after a change of the schema (another opener's migration): `SELECT *`'s
    // columns are then read again.
    if (rows.length > 0 && rows[0]!.length !== kept.columns.width) kept.columns = columnsOf(kept.statement);
    const { named } = kept.columns;
    return rows.map((values) => {
      const row: Row = {};
      for (const [i, name] of named) row[name] = values[i]!;
      return row;
    });
  };
  const runNow = (sql: string, params: SqlValue[] = []): number => statement(sql).statement.run(params).changes;
  const queries: Queries = {
    all: (sql, params) => settle(() => allNow(sql, params)),
    run: (sql, params) => settle(() => runNow(sql, params)),
  };
  const all = (sql: string, params?: SqlValue[]) => serial(() => queries.all(sql, params));
  const run = (sql: string, params?: SqlValue[]) => serial(() => queries.run(sql, params));
  /** `work` in one write transaction (BEGIN IMMEDIATE): committed when it resolves, rolled back when it throws. */
  const inTransaction = async <T>(work: () => Promise<T>): Promise<T> => {
    runNow("BEGIN IMMEDIATE");
    try {
      const result = await work();
      runNow("COMMIT");
      return result;
    } finally {
      if (connection.inTransaction) runNow("ROLLBACK"); // what was not committed
    }
  };
  return {
    dialect: "sqlite",
    all,
    run,
    async batch(statements) {
      const each = () => {
        for (const s of statements) runNow(s.sql, s.params);
      };
      if (held.getStore() || inside.getStore()) return each(); // in a transaction already
      await serial(() => inTransaction(() => settle(each)));
    },
    transaction: (work) =>
      held.getStore() ? work(queries) : serial(() => inside.run(true, () => inTransaction(() => work(queries)))), // in exclusive's already
    // One write transaction (BEGIN IMMEDIATE) holds SQLite's write lock across `work`: another opener migrating at
    // the same moment waits for it, then finds the migrations applied.
    async exclusive(work) {
      if (held.getStore()) return work();
      return serial(async () => {
        await retryBusy(() => runNow("BEGIN IMMEDIATE"));
        try {
          const result = await held.run(true, work);
          runNow("COMMIT");
          return result;
        } finally {
          if (connection.inTransaction) runNow("ROLLBACK");
        }
      });
    },
    close: () => settle(() => void connection.close()),
  };
}

/**
 * The driver runs a statement on the thread, and one that meets another connection's lock waits for it there (the busy
 * timeout), holding the event loop; and this process has one connection, on which a statement sent while one of its
 * own transactions is open (its statements run between awaits) would become part of it. So this process's statements
 * and transactions take turns here, each waiting without holding the thread; what a transaction's or `exclusive`'s
 * work runs goes straight through (it is already inside).
 */
function createSerial(held: AsyncLocalStorage<true>) {
  let queue: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    if (held.getStore() || inside.getStore()) return work();
    const turn = queue.then(work, work);
    queue = turn.catch(() => {});
    return turn;
  };
}

/** Marks the work of a transaction (see createSerial). */
const inside = new AsyncLocalStorage<true>();
