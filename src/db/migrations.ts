// The portal's schema as numbered migrations, applied in order at start-up and recorded in schema_migrations.
import type { PortalDatabase } from "./database.ts";

/** One step of the schema: statements in the SQL that SQLite and PostgreSQL share. Never edit one that has shipped. */
export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

/** Every migration, oldest first. Times are BIGINT milliseconds since the epoch; IDs are random text. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "accounts, sessions, tokens, keys, sign-in throttle, audit",
    statements: [
      `CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        partner TEXT NOT NULL,
        password TEXT NOT NULL,
        verified BIGINT,
        role TEXT NOT NULL DEFAULT 'partner',
        status TEXT NOT NULL DEFAULT 'active',
        created BIGINT NOT NULL
      )`,
      `CREATE TABLE sessions (
        id_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        created BIGINT NOT NULL,
        seen BIGINT NOT NULL
      )`,
      `CREATE INDEX sessions_account ON sessions (account_id)`,
      `CREATE TABLE tokens (
        hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        purpose TEXT NOT NULL,
        email TEXT NOT NULL,
        expires BIGINT NOT NULL
      )`,
      `CREATE INDEX tokens_account ON tokens (account_id)`,
      `CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        file_name TEXT NOT NULL UNIQUE,
        label TEXT NOT NULL,
        first4 TEXT NOT NULL,
        last4 TEXT NOT NULL,
        created BIGINT NOT NULL
      )`,
      `CREATE INDEX api_keys_account ON api_keys (account_id)`,
      `CREATE TABLE signin_throttle (
        key TEXT PRIMARY KEY,
        failures INTEGER NOT NULL,
        window_start BIGINT NOT NULL,
        locked_until BIGINT NOT NULL
      )`,
      `CREATE TABLE audit (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        at BIGINT NOT NULL,
        event TEXT NOT NULL,
        detail TEXT NOT NULL,
        address TEXT NOT NULL
      )`,
      `CREATE INDEX audit_account ON audit (account_id, at)`,
    ],
  },
  {
    version: 2,
    name: "operator pages: an account's rate and burst, the audit trail by time",
    statements: [
      `ALTER TABLE accounts ADD COLUMN rate DOUBLE PRECISION`,
      `ALTER TABLE accounts ADD COLUMN burst BIGINT`,
      `CREATE INDEX audit_at ON audit (at)`,
    ],
  },
  {
    version: 3,
    name: "usage per key: per-minute and per-day counts, each key's last use, the batches handed over",
    statements: [
      // Keyed by the keys file's name of the key (api_keys.file_name for the portal's keys), never by the key.
      `CREATE TABLE usage_minute (
        key_name TEXT NOT NULL,
        minute BIGINT NOT NULL,
        ok BIGINT NOT NULL,
        not_modified BIGINT NOT NULL,
        client_error BIGINT NOT NULL,
        limited BIGINT NOT NULL,
        server_error BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        PRIMARY KEY (key_name, minute)
      )`,
      `CREATE INDEX usage_minute_at ON usage_minute (minute)`,
      `CREATE TABLE usage_day (
        key_name TEXT NOT NULL,
        day BIGINT NOT NULL,
        ok BIGINT NOT NULL,
        not_modified BIGINT NOT NULL,
        client_error BIGINT NOT NULL,
        limited BIGINT NOT NULL,
        server_error BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        PRIMARY KEY (key_name, day)
      )`,
      `CREATE INDEX usage_day_at ON usage_day (day)`,
      `CREATE TABLE usage_last (key_name TEXT PRIMARY KEY, at BIGINT NOT NULL)`,
      // A batch's ID is recorded in the transaction that adds its counts: a batch sent again is not counted twice.
      `CREATE TABLE usage_batches (id TEXT PRIMARY KEY, at BIGINT NOT NULL)`,
      `CREATE INDEX usage_batches_at ON usage_batches (at)`,
    ],
  },
  {
    version: 4,
    name: "usage per key: per-hour counts, so that a day's traffic of every account is read from 24 rows a key, not 1,440",
    statements: [
      `CREATE TABLE usage_hour (
        key_name TEXT NOT NULL,
        hour BIGINT NOT NULL,
        ok BIGINT NOT NULL,
        not_modified BIGINT NOT NULL,
        client_error BIGINT NOT NULL,
        limited BIGINT NOT NULL,
        server_error BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        PRIMARY KEY (key_name, hour)
      )`,
      `CREATE INDEX usage_hour_at ON usage_hour (hour)`,
      // The minutes kept so far, by hour: what was counted before this migration is read the same way as after it.
      `INSERT INTO usage_hour (key_name, hour, ok, not_modified, client_error, limited, server_error, bytes)
       SELECT key_name, minute - (minute % 3600000), SUM(ok), SUM(not_modified), SUM(client_error), SUM(limited),
         SUM(server_error), SUM(bytes)
       FROM usage_minute GROUP BY key_name, minute - (minute % 3600000)`,
    ],
  },
  {
    version: 5,
    name: "the outbox of mail sent by a background sender; tokens bound to the credentials they were issued under",
    statements: [
      // `kind` is `mail` (subject and body given) or a link mail (`verify`, `reset`, `email`) whose token is issued
      // when it is sent, so that no live link waits here. A row is claimed by one sender until `claimed_until`.
      `CREATE TABLE outbox (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        recipient TEXT NOT NULL,
        account_id TEXT,
        subject TEXT NOT NULL,
        body TEXT NOT NULL,
        queued BIGINT NOT NULL,
        next_at BIGINT NOT NULL,
        attempts INTEGER NOT NULL,
        claimed_until BIGINT NOT NULL
      )`,
      `CREATE INDEX outbox_next ON outbox (next_at)`,
      // A digest of the account's password hash, email and verification when the token was issued: a token whose
      // account has changed any of them since is dead (tokens issued before this migration have '' and are dead).
      `ALTER TABLE tokens ADD COLUMN stamp TEXT NOT NULL DEFAULT ''`,
    ],
  },
  {
    version: 6,
    name: "sign-in device cookies: the hash of each device token, whose sign-ins are limited per device",
    statements: [
      `CREATE TABLE signin_devices (
        token_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        created BIGINT NOT NULL,
        expires BIGINT NOT NULL
      )`,
      `CREATE INDEX signin_devices_account ON signin_devices (account_id, created)`,
    ],
  },
  {
    version: 7,
    name: "a new key shown once, on the page a creation or rotation redirects to",
    statements: [
      // `sealed`: the key, encrypted under a key derived from the session ID (only the session's holder can read it);
      // NULL once shown. Rows are deleted an hour after they were made (a deleted account's too: no reference).
      `CREATE TABLE key_reveals (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        intro TEXT NOT NULL,
        sealed TEXT,
        created BIGINT NOT NULL,
        shown BIGINT
      )`,
      `CREATE INDEX key_reveals_created ON key_reveals (created)`,
    ],
  },
  {
    version: 8,
    name: "usage per key and endpoint: the per-minute, per-hour and per-day counts by route class as well",
    statements: [
      // SQLite cannot change a primary key: each table is made again with the route in its key, and what was counted
      // before is kept under the route 'unknown' (no route class has that name). The indexes go with the old tables.
      ...withRoute("usage_minute", "minute"),
      ...withRoute("usage_hour", "hour"),
      ...withRoute("usage_day", "day"),
    ],
  },
  // Version 9 is the teams' (organisations and members). The runner applies whichever versions a database lacks, in
  // the order of this list, so a database at 10 without 9 takes 9 when it arrives: the two touch different tables.
  {
    version: 9,
    name: "teams: organisations, their members and roles, invitations; keys by their maker; the trail's actor",
    statements: [
      // An organisation's ID is its founder's account ID, so that every existing account becomes a one-member
      // organisation (its person as owner) whose keys keep their names in the keys file (`p.<organisation>.<key>`), and
      // api_keys.account_id, the operator's pages and the usage tables keep reading what they did.
      `CREATE TABLE organisations (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created BIGINT NOT NULL
      )`,
      `INSERT INTO organisations (id, name, created) SELECT id, partner, created FROM accounts`,
      `CREATE TABLE members (
        org_id TEXT NOT NULL REFERENCES organisations (id),
        account_id TEXT NOT NULL REFERENCES accounts (id),
        role TEXT NOT NULL,
        created BIGINT NOT NULL,
        PRIMARY KEY (org_id, account_id)
      )`,
      `CREATE INDEX members_account ON members (account_id)`,
      `INSERT INTO members (org_id, account_id, role, created) SELECT id, id, 'owner', created FROM accounts`,
      // `hash`: the link's token, hashed; NULL until the outbox sends the mail (no live link waits in the outbox).
      `CREATE TABLE invitations (
        id TEXT PRIMARY KEY,
        hash TEXT UNIQUE,
        org_id TEXT NOT NULL REFERENCES organisations (id),
        email TEXT NOT NULL,
        role TEXT NOT NULL,
        invited_by TEXT NOT NULL,
        created BIGINT NOT NULL,
        expires BIGINT NOT NULL
      )`,
      `CREATE INDEX invitations_org ON invitations (org_id)`,
      // Who made each key (an account ID); the keys made before were made by the account's person.
      `ALTER TABLE api_keys ADD COLUMN created_by TEXT`,
      `UPDATE api_keys SET created_by = account_id`,
      // The organisation a session acts for; a session whose person is no longer its member is refused.
      `ALTER TABLE sessions ADD COLUMN org_id TEXT`,
      `UPDATE sessions SET org_id = account_id`,
      // The email of the member who did what an event records (the account's own, for the partner's events before).
      `ALTER TABLE audit ADD COLUMN actor TEXT NOT NULL DEFAULT ''`,
      // (An operator's events before keep '': their detail names the operator.)
      `UPDATE audit SET actor = COALESCE((SELECT email FROM accounts WHERE accounts.id = audit.account_id), '')
       WHERE event NOT LIKE 'operator.%'`,
    ],
  },
  {
    version: 10,
    name: "two-factor sign-in: each account's TOTP secret (sealed), its recovery codes (hashed), sign-ins awaiting a code",
    statements: [
      // `sealed`: the base32 secret under AES-256-GCM with the portal's secret key (PORTAL_SECRET_KEY), bound to the
      // account; `confirmed` NULL while being set up; `last_step` the latest 30-second step whose code was accepted
      // (a code of that step or an earlier one is refused: no replay).
      `CREATE TABLE totp_factors (
        account_id TEXT PRIMARY KEY REFERENCES accounts (id),
        sealed TEXT NOT NULL,
        created BIGINT NOT NULL,
        confirmed BIGINT,
        last_step BIGINT NOT NULL DEFAULT 0
      )`,
      // SHA-256 of a random 80-bit code (never the code); `used` set once, by the statement that accepts it.
      `CREATE TABLE recovery_codes (
        code_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        created BIGINT NOT NULL,
        used BIGINT
      )`,
      `CREATE INDEX recovery_codes_account ON recovery_codes (account_id)`,
      // A right password of an account with two-factor: the hash of the pending cookie's token; no session yet.
      `CREATE TABLE signin_challenges (
        id_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        created BIGINT NOT NULL
      )`,
      `CREATE INDEX signin_challenges_account ON signin_challenges (account_id)`,
    ],
  },
  {
    version: 11,
    name: "passkeys (WebAuthn): each account's credentials, and the challenges of their ceremonies",
    statements: [
      // `credential_id` and `public_key` (COSE) base64url; `counter` the authenticator's signature count last accepted
      // (0: one that keeps none); `transports` comma-separated, as the browser reported them; `name` the person's.
      `CREATE TABLE passkeys (
        credential_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        public_key TEXT NOT NULL,
        counter BIGINT NOT NULL DEFAULT 0,
        transports TEXT NOT NULL DEFAULT '',
        name TEXT NOT NULL,
        created BIGINT NOT NULL,
        last_used BIGINT
      )`,
      `CREATE INDEX passkeys_account ON passkeys (account_id)`,
      // A challenge handed to a browser: its SHA-256 (never kept in clear), what it is for (register, first, second),
      // the account it is for (NULL for a sign-in with a passkey alone), and the hash of the browser's form token, so
      // that only the browser given it can use it. Deleted by the one statement that uses it, or once expired.
      `CREATE TABLE passkey_challenges (
        id_hash TEXT PRIMARY KEY,
        purpose TEXT NOT NULL,
        account_id TEXT REFERENCES accounts (id),
        holder TEXT NOT NULL,
        created BIGINT NOT NULL
      )`,
      `CREATE INDEX passkey_challenges_created ON passkey_challenges (created)`,
    ],
  },
  // Version 12 touches only the organisations of 9.
  {
    version: 12,
    name: "organisation settings: requiring two-factor sign-in of every member",
    statements: [
      // 1: every member must sign in with two factors (store/two-factor.ts hasSecondFactor) to use the portal for it.
      `ALTER TABLE organisations ADD COLUMN require_two_factor INTEGER NOT NULL DEFAULT 0`,
    ],
  },
  // Version 13 depends on 9 only (organisations, accounts): it may be applied before or after 11 and 12.
  {
    version: 13,
    name: "webhooks: endpoints (secrets sealed), the events followed from the API's stream, deliveries and attempts",
    statements: [
      // `secret`, `previous`: the whsec_ secrets sealed under PORTAL_SECRET_KEY (AES-256-GCM, bound to the endpoint's
      // ID); `previous` is signed with too until `previous_until`. `types`, `stores`: space-separated, "" for all.
      // `failing_since`: the first failed attempt since the last success (NULL: not failing).
      `CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL REFERENCES organisations (id),
        url TEXT NOT NULL,
        types TEXT NOT NULL,
        stores TEXT NOT NULL,
        affid TEXT NOT NULL,
        secret TEXT NOT NULL,
        previous TEXT,
        previous_until BIGINT NOT NULL DEFAULT 0,
        enabled INTEGER NOT NULL,
        disabled_reason TEXT NOT NULL DEFAULT '',
        failing_since BIGINT,
        created BIGINT NOT NULL,
        created_by TEXT NOT NULL
      )`,
      `CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id)`,
      // An event as the API's stream sent it (without affid): its ID, type, store, instant (`at`, ms) and data.
      `CREATE TABLE webhook_events (
        id TEXT PRIMARY KEY,
        type TEXT NOT NULL,
        store TEXT NOT NULL,
        at BIGINT NOT NULL,
        received BIGINT NOT NULL,
        data TEXT NOT NULL
      )`,
      `CREATE INDEX webhook_events_at ON webhook_events (at)`,
      // Where the portal's reading of the API's stream is (the last event ID), by stream name.
      `CREATE TABLE webhook_cursor (name TEXT PRIMARY KEY, last_id TEXT NOT NULL, updated BIGINT NOT NULL)`,
      // One event to one endpoint: `state` pending, delivered or failed; `attempts` made; a sender holds it while
      // `lease_until` is ahead (its `lease` token names it); `seq` orders the queue.
      `CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id),
        event_id TEXT NOT NULL REFERENCES webhook_events (id),
        seq BIGINT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_at BIGINT NOT NULL,
        lease TEXT NOT NULL DEFAULT '',
        lease_until BIGINT NOT NULL DEFAULT 0,
        created BIGINT NOT NULL,
        UNIQUE (endpoint_id, event_id)
      )`,
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_at)`,
      // Each attempt: its number, when, the answer's status (0: none), latency, the answer's first bytes or the error.
      `CREATE TABLE webhook_attempts (
        id TEXT PRIMARY KEY,
        delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id),
        attempt INTEGER NOT NULL,
        at BIGINT NOT NULL,
        status INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        answer TEXT NOT NULL
      )`,
      `CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, at)`,
    ],
  },
  // Version 14 depends on 13 only.
  {
    version: 14,
    name: "a new webhook signing secret shown once, on the endpoint's page an addition or rotation redirects to",
    statements: [
      // One per session and endpoint: `session_hash` the session ID's SHA-256 (as sessions.id_hash); `sealed` the
      // secret under PORTAL_SECRET_KEY (AES-256-GCM), bound to the endpoint and to the session's ID itself, which the
      // database does not hold. Deleted by the statement that shows it, or once a few minutes old.
      `CREATE TABLE webhook_secret_reveals (
        session_hash TEXT NOT NULL,
        endpoint_id TEXT NOT NULL,
        intro TEXT NOT NULL,
        sealed TEXT NOT NULL,
        created BIGINT NOT NULL,
        PRIMARY KEY (session_hash, endpoint_id)
      )`,
      `CREATE INDEX webhook_secret_reveals_created ON webhook_secret_reveals (created)`,
    ],
  },
];

/** Migration 8's statements for one usage table (`table`, counted by `period`): made again with the route in its key. */
function withRoute(table: string, period: string): string[] {
  const counts = "ok, not_modified, client_error, limited, server_error, bytes";
  return [
    `CREATE TABLE ${table}_by_route (
        key_name TEXT NOT NULL,
        ${period} BIGINT NOT NULL,
        route TEXT NOT NULL,
        ok BIGINT NOT NULL,
        not_modified BIGINT NOT NULL,
        client_error BIGINT NOT NULL,
        limited BIGINT NOT NULL,
        server_error BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        PRIMARY KEY (key_name, ${period}, route)
      )`,
    `INSERT INTO ${table}_by_route (key_name, ${period}, route, ${counts})
       SELECT key_name, ${period}, 'unknown', ${counts} FROM ${table}`,
    `DROP TABLE ${table}`,
    `ALTER TABLE ${table}_by_route RENAME TO ${table}`,
    `CREATE INDEX ${table}_at ON ${table} (${period})`,
  ];
}

/** The database was migrated by newer code than this: refuse to run against a schema we do not know. */
export class SchemaVersionError extends Error {
  constructor(found: number, known: number) {
    super(`the portal database is at schema version ${found}, newer than this code's ${known}: update the portal`);
    this.name = "SchemaVersionError";
  }
}

/** Applies the migrations `db` has not had yet, each in one transaction with its record; returns the versions applied. */
export async function migrate(
  db: PortalDatabase,
  now: number,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  return db.exclusive(async () => {
    await db.run(
      `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)`,
    );
    const done = new Set((await db.all("SELECT version FROM schema_migrations")).map((r) => Number(r.version)));
    const known = Math.max(0, ...migrations.map((m) => m.version));
    const newest = Math.max(0, ...done);
    if (newest > known) throw new SchemaVersionError(newest, known);
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await db.batch([
        ...m.statements.map((sql) => ({ sql })),
        {
          sql: "INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)",
          params: [m.version, m.name, now],
        },
      ]);
      applied.push(m.version);
    }
    return applied;
  });
}
