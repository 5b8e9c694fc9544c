// A real PostgreSQL for the tests (scripts/lib/postgres-server.ts) in a temp dir of the test file, on a free port.
import { startPostgresIn } from "../../scripts/lib/postgres-server.ts";
import type { PostgresServer } from "../../scripts/lib/postgres-server.ts";
import { freePort, tempDir } from "../helpers/fixture.ts";

export type { PostgresServer };

/** Starts PostgreSQL in a new temp dir on a free loopback port; resolves once it accepts connections. */
export async function startPostgres(): Promise<PostgresServer> {
  return startPostgresIn(await tempDir("fsa-postgres-"), await freePort());
}
