// Opening the portal's SQLite database from several openers at once, as `npm start` does (the portal, each API
// worker's usage store thread, the demo account): threads and processes open the same new file at the same moment,
// and every one of them must open and migrate it, none failing with SQLITE_BUSY or on a migration another applied.
// Also: the files the database is kept in (and SQLite's -wal and -shm beside it) are readable by their owner only.
import { fork } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chmod, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.ts";
import { MIGRATIONS, migrate } from "../../src/db/migrations.ts";
import { tempDir } from "../helpers/fixture.ts";

const OPENER = join(dirname(fileURLToPath(import.meta.url)), "db-opener.ts");
const THREADS = 4;
const PROCESSES = 4;
/** Rounds of a new file opened by every opener at once: without the fix, 4 openers in 10 rounds failed 4 times. */
const ROUNDS = 25;

/** An opener: sends it a path, resolves with its answer ("ok" or the error). */
interface Opener {
  open(path: string, name: string): Promise<string>;
  stop(): Promise<void>;
}

function answers(on: (listener: (m: unknown) => void) => void): () => Promise<string> {
  const queue: string[] = [];
  const waiting: ((m: string) => void)[] = [];
  on((m) => {
    const w = waiting.shift();
    if (w) w(String(m));
    else queue.push(String(m));
  });
  return () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve)));
}

async function threadOpener(): Promise<Opener> {
  const tsx = join(dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist/esm/api/index.mjs");
  const source = `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(pathToFileURL(OPENER).href)}); })`;
  const worker = new Worker(source, { eval: true });
  const next = answers((l) => worker.on("message", l));
  expect(await next()).toBe("ready");
  return {
    open: (path, opener) => (worker.postMessage({ path, opener }), next()),
    stop: async () => void (await worker.terminate()),
  };
}

async function processOpener(): Promise<Opener> {
  const child: ChildProcess = fork(OPENER, [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = answers((l) => child.on("message", l));
  expect(await next()).toBe("ready");
  return {
    open: (path, opener) => (child.send({ path, opener }), next()),
    stop: async () => {
      child.disconnect();
      if (child.exitCode === null) await once(child, "exit");
    },
  };
}

describe("opening the SQLite database from several threads and processes at once", () => {
  let openers: Opener[] = [];
  beforeAll(async () => {
    openers = await Promise.all([
      ...Array.from({ length: THREADS }, threadOpener),
      ...Array.from({ length: PROCESSES }, processOpener),
    ]);
  });
  afterAll(async () => {
    await Promise.all(openers.map((o) => o.stop()));
  });

  it(`opens and migrates a new file ${ROUNDS} times from ${THREADS} threads and ${PROCESSES} processes at once`, async () => {
    const dir = await tempDir("fsa-db-open-");
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const path = join(dir, `portal-${round}.db`);
      const said = await Promise.all(openers.map((o, i) => o.open(path, `opener-${i}`)));
      failures.push(...said.filter((s) => s !== "ok").map((s) => `round ${round}: ${s}`));
      const db = await openDatabase(path);
      try {
        expect(await db.all("PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }]);
        expect(await migrate(db, 0)).toEqual([]); // every migration applied, once
        const versions = await db.all("SELECT version FROM schema_migrations ORDER BY version");
        expect(versions.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
        if (!said.some((s) => s !== "ok"))
          expect(await db.all("SELECT COUNT(*) AS n FROM audit")).toEqual([{ n: openers.length }]);
      } finally {
        await db.close();
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});

describe("the database files' modes", () => {
  const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

  it("creates the database, its -wal and its -shm 0600 (owner only), whatever the umask", async () => {
    const path = join(await tempDir("fsa-db-mode-"), "portal.db");
    const before = process.umask(0o022); // the usual umask: files 0644 unless made otherwise
    try {
      const db = await openDatabase(path);
      try {
        await migrate(db, 0);
        await db.run(
          "INSERT INTO audit (id, account_id, at, event, detail, address) VALUES ('m', 'x', 1, 'e', '', '')",
        );
        // -wal and -shm exist while the database is open
        expect(await Promise.all([path, `${path}-wal`, `${path}-shm`].map(modeOf))).toEqual([0o600, 0o600, 0o600]);
      } finally {
        await db.close();
      }
    } finally {
      process.umask(before);
    }
  });

  it("narrows a database file made before with a wider mode to 0600 when it is opened", async () => {
    const path = join(await tempDir("fsa-db-mode-"), "portal.db");
    await writeFile(path, "");
    await chmod(path, 0o644);
    const db = await openDatabase(path);
    try {
      await migrate(db, 0);
      expect(await Promise.all([path, `${path}-wal`, `${path}-shm`].map(modeOf))).toEqual([0o600, 0o600, 0o600]);
    } finally {
      await db.close();
    }
  });
});
