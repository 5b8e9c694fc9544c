// A real PostgreSQL for the tests (scripts/lib/postgres-server.ts) in a temp dir of the test file, on a free port.
import { startPostgresIn } from "../../scripts/lib/postgres-server.ts";
import type { PostgresServer } from "../../scripts/lib/postgres-server.ts";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { freePort, tempDir } from "../helpers/fixture.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

export type { PostgresServer };

/** Starts PostgreSQL in a new temp dir on a free loopback port; resolves once it accepts connections. */
export async function startPostgres(): Promise<PostgresServer> {
  return startPostgresIn(await tempDir("fsa-postgres-"), await freePort());
}

/**
 * The two databases the portal runs on, for `describe.each`: a new SQLite file in a temp dir, and the PostgreSQL
 * `server()` names (started by the test file's beforeAll, so read when a suite starts, not when the list is made).
 */
export function bothDatabases(server: () => PostgresServer) {
  return [
    { name: "SQLite", url: async () => join(await tempDir("fsa-db-"), "portal.db") },
    { name: "PostgreSQL", url: () => Promise.resolve(server().url) },
  ];
}

/**
 * Starts PostgreSQL and the SMTP sink before the test file's tests (`set` hands them to the file) and stops them after:
 * what the portal's tests on both databases share.
 */
export function withPostgresAndSmtp(set: (postgres: PostgresServer, smtp: SmtpServer) => void): void {
  let postgres: PostgresServer | undefined;
  let smtp: SmtpServer | undefined;
  beforeAll(async () => {
    [postgres, smtp] = await Promise.all([startPostgres(), startSmtpServer()]);
    set(postgres, smtp);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([postgres?.stop(), smtp?.stop()]);
  });
}
