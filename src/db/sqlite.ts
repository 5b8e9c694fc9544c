// The portal's embedded database: a SQLite file through @libsql/client (a prebuilt binary, on every Node we support).
// Several openers share the file at once (the portal, each API worker's usage store thread, `npm start`'s demo
// account): every connection waits for another's lock (the busy timeout, set as each connection opens, before any
// statement), a new file appears already in WAL mode (the mode is set once, never by two openers at once), and the
// migrations run in one write transaction (exclusive), so that two openers never apply the same one.
import { createClient } from "@libsql/client";
import type { Client, InValue, Transaction } from "@libsql/client";
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { chmod, link, open, rm, stat } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { threadId } from "node:worker_threads";
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

const toRow = (row: Record<string, unknown>): Row => {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === "bigint" ? Number(v) : (v as SqlValue);
  return out;
};

const isBusy = (err: unknown) => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
};

/** Runs `work`, again after a pause while it fails with SQLITE_BUSY, for up to OPEN_RETRY_MS. */
async function retryBusy<T>(work: () => Promise<T>): Promise<T> {
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
    const client = createClient({ url: pathToFileURL(made).href, timeout: BUSY_TIMEOUT_MS });
    try {
      await client.execute("PRAGMA journal_mode = WAL"); // recorded in the file's header
    } finally {
      client.close();
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

/** A client whose every connection has the busy timeout, on a file in WAL mode. */
async function connect(path: string): Promise<Client> {
  const client = createClient({ url: pathToFileURL(path).href, intMode: "number", timeout: BUSY_TIMEOUT_MS });
  try {
    const [mode] = (await client.execute("PRAGMA journal_mode")).rows;
    if (typeof mode?.journal_mode !== "string" || mode.journal_mode.toLowerCase() !== "wal")
      await client.execute("PRAGMA journal_mode = WAL");
    return client;
  } catch (err) {
    client.close();
    throw err;
  }
}

/** Opens (creating it, owner-only, if need be) the SQLite database file at `path`, in WAL mode, foreign keys on. */
export async function openSqlite(path: string): Promise<PortalDatabase> {
  await prepareFile(path);
  const client = await retryBusy(() => connect(path));
  const args = (params: SqlValue[] = []) => params as InValue[];
  /** The migrations' write transaction, which the statements `exclusive`'s work makes go through. */
  const held = new AsyncLocalStorage<Transaction>();
  const on = () => held.getStore() ?? client;
  const serial = createSerial(held);
  const all = async (sql: string, params?: SqlValue[]) =>
    serial(async () =>
      (await on().execute({ sql, args: args(params) })).rows.map((r) => toRow(r as unknown as Record<string, unknown>)),
    );
  const run = async (sql: string, params?: SqlValue[]) =>
    serial(async () => (await on().execute({ sql, args: args(params) })).rowsAffected);
  return {
    dialect: "sqlite",
    all,
    run,
    async batch(statements) {
      const batch = statements.map((s) => ({ sql: s.sql, args: args(s.params) }));
      const tx = held.getStore();
      await serial(() => (tx ? tx.batch(batch) : client.batch(batch, "write")));
    },
    transaction: (work) => (held.getStore() ? work({ all, run }) : serial(() => inTransaction(client, args, work))), // in exclusive's already
    // One write transaction (BEGIN IMMEDIATE) holds SQLite's write lock across `work`: another opener migrating at
    // the same moment waits for it, then finds the migrations applied.
    async exclusive(work) {
      if (held.getStore()) return work();
      return serial(async () => {
        const tx = await retryBusy(() => client.transaction("write"));
        try {
          const result = await held.run(tx, work);
          await tx.commit();
          return result;
        } finally {
          tx.close();
        }
      });
    },
    close: () => Promise.resolve(client.close()),
  };
}

/**
 * The driver runs a statement on the thread, and one that meets another connection's lock waits for it there (the busy
 * timeout), holding the event loop: a statement of this process sent while one of its own transactions is open (its
 * statements run between awaits) would wait for a lock that transaction cannot release, and fail with SQLITE_BUSY after
 * the timeout. So this process's statements and transactions take turns here, each waiting without holding the thread;
 * what a transaction's or `exclusive`'s work runs goes straight through (it is already inside).
 */
function createSerial(held: AsyncLocalStorage<Transaction>) {
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

/** Reading and writing through `on` (a transaction). */
const queriesOn = (on: Transaction, args: (params?: SqlValue[]) => InValue[]): Queries => ({
  all: async (sql, params) =>
    (await on.execute({ sql, args: args(params) })).rows.map((r) => toRow(r as unknown as Record<string, unknown>)),
  run: async (sql, params) => (await on.execute({ sql, args: args(params) })).rowsAffected,
});

/** `work` in one write transaction of its own, through its statements. */
async function inTransaction<T>(
  client: Client,
  args: (params?: SqlValue[]) => InValue[],
  work: (tx: Queries) => Promise<T>,
): Promise<T> {
  return inside.run(true, async () => {
    const tx = await client.transaction("write");
    try {
      const result = await work(queriesOn(tx, args));
      await tx.commit();
      return result;
    } finally {
      tx.close(); // rolls back what was not committed
    }
  });
}
