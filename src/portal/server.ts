// Starts the portal: opens its database (migrating it), makes the app and serves it with @hono/node-server.
import { createAdaptorServer } from "@hono/node-server";
import type { Server } from "node:http";
import { once } from "node:events";
import { createPortalApp } from "./app.ts";
import type { PortalOptions } from "./context.ts";
import { openDatabase } from "../db/database.ts";
import type { PortalDatabase } from "../db/database.ts";
import { migrate } from "../db/migrations.ts";
import type { MailTransport } from "./mailer.ts";
import { createOutbox } from "./outbox.ts";
import { GRACE_CHECK_MS, mailGraceEndings } from "./security-mail.ts";
import { errorLine } from "../errors.ts";
import type { Outbox, OutboxSettings } from "./outbox.ts";
import { startWebhooks } from "./webhooks/start-webhooks.ts";
import type { Webhooks, WebhookSettings } from "./webhooks/start-webhooks.ts";

/** What startPortal needs: the app's options, less the database (opened from `databaseUrl`) and the URL (known once listening). */
export interface StartPortalOptions extends Omit<PortalOptions, "db" | "publicUrl" | "mailer"> {
  /** A SQLite file path or a postgres:// URL. */
  databaseUrl: string;
  host: string;
  /** 0 for any free port. */
  port: number;
  /** The public URL; default http://host:port (with the port listened on). */
  publicUrl?: string;
  /** How mail is sent: the outbox's sender hands each mail the routes queue to it. */
  mailer: MailTransport;
  /** The outbox's sender. Default DEFAULT_OUTBOX. */
  outbox?: Partial<OutboxSettings>;
  /** Webhooks (they run when `secretKey` is set). Default: no API key (no events read), no addresses allowed. */
  webhookSettings?: WebhookSettings;
}

/** A running portal. */
export interface RunningPortal {
  url: string;
  port: number;
  db: PortalDatabase;
  /** Versions of the schema migrations this start applied. */
  migrated: number[];
  /** The mail the portal queued, and its sender (stopped by close). */
  outbox: Outbox;
  /**
   * Mails the accounts whose rotated keys' old keys stop working within 24 hours (security-mail.ts): done at the
   * start and every GRACE_CHECK_MS; returns the mails' count.
   */
  mailGraceEndings(): Promise<number>;
  /** The webhooks' sender and stream reader; null without a secret key. */
  webhooks: Webhooks | null;
  close(): Promise<void>;
}

/** Opens and migrates the database, then listens on host:port. */
export async function startPortal(options: StartPortalOptions): Promise<RunningPortal> {
  const db = await openDatabase(options.databaseUrl);
  const clock = options.clock ?? Date.now;
  const migrated = await migrate(db, clock());
  let url = "";
  const publicUrl = () => options.publicUrl ?? url;
  const log = options.log ?? (() => {});
  const outbox = createOutbox({ db, transport: options.mailer, publicUrl, clock, log, settings: options.outbox });
  const webhooks = startWebhooks({
    db,
    mailer: outbox,
    secretKey: options.secretKey ?? null,
    apiUrl: options.apiUrl,
    clock,
    log,
    publicUrl,
    settings: options.webhookSettings ?? {},
  });
  const app = createPortalApp({ ...options, db, clock, publicUrl, mailer: outbox, webhooks });
  const server = createAdaptorServer({ fetch: app.fetch, hostname: options.host }) as Server;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.listen(options.port, options.host);
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  url = `http://${host}:${port}`;
  void outbox.flush(); // mail left queued by an earlier run
  const graceMails = { db, mailer: outbox, publicUrl, keysFile: options.keysFile };
  const checkGrace = () => mailGraceEndings(graceMails, clock());
  const logFailure = (err: unknown) =>
    log(JSON.stringify(errorLine("error", "grace_mail_failed", err, { at: clock() })));
  let checking = checkGrace().catch(logFailure);
  const graceTimer = setInterval(() => {
    checking = checking.then(() => checkGrace().catch(logFailure));
  }, GRACE_CHECK_MS).unref();
  return {
    url: options.publicUrl ?? url,
    port,
    db,
    migrated,
    outbox,
    mailGraceEndings: checkGrace,
    webhooks,
    close: async () => {
      clearInterval(graceTimer);
      await checking;
      await webhooks?.close();
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await outbox.close();
      options.mailer.close();
      await db.close();
    },
  };
}
