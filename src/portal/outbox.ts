// The outbox's sender: mail leaves the request path. A route's `send` queues a row (src/portal/store/outbox-rows.ts) and
// wakes the sender, which claims due rows (one sender a row, across processes), sends each through the transport,
// deletes it once sent, and on failure puts it back with a doubling delay, until it gives up, logs it and drops it.
import type { PortalDatabase } from "../db/database.ts";
import { prepareMail } from "./link-mails.ts";
import type { Mailer, MailTransport } from "./mailer.ts";
import { claimMail, deleteMail, nextDue, queueMail, retryMail } from "./store/outbox-rows.ts";
import type { OutboxRow } from "./store/outbox-rows.ts";

/** How the sender works. */
export interface OutboxSettings {
  /** Attempts at a mail before it is dropped (and logged). */
  attempts: number;
  /** The wait before the second attempt, ms; doubled before each next one. */
  firstRetryMs: number;
  /** How long a claim keeps other senders off a row, ms: longer than a send may take (the transport's timeouts). */
  claimMs: number;
  /** Mails sent at once by one process. */
  senders: number;
  /** The longest wait between looks at the table, ms (for rows another process queued, then left). */
  pollMs: number;
}

/**
 * Defaults: 8 attempts, 30 s after the first and doubling (the last about 1 h after the first), claims of 10 minutes
 * (the SMTP transport gives up within 50 s), 4 mails at once, a look at the table at least every minute.
 */
const DEFAULT_OUTBOX = {
  attempts: 8,
  firstRetryMs: 30_000,
  claimMs: 10 * 60_000,
  senders: 4,
  pollMs: 60_000,
} as const satisfies OutboxSettings;

/** The shortest wait before a look at the table that no queued mail asked for, ms. */
const MIN_POLL_MS = 1000;

interface OutboxOptions {
  db: PortalDatabase;
  transport: MailTransport;
  /** The portal's public URL, for the links. */
  publicUrl: () => string;
  /** The time, ms since the epoch: when rows are due. */
  clock: () => number;
  /** Where failures and dropped mails are logged (JSON lines). */
  log: (line: string) => void;
  /** Default DEFAULT_OUTBOX. */
  settings?: Partial<OutboxSettings>;
}

/** The routes' Mailer, and the sender behind it. */
export interface Outbox extends Mailer {
  /** Sends what is due now: resolves when a pass of the sender that began after the call has ended. */
  flush(): Promise<void>;
  /** Stops the sender once the mails it is sending are done; what is queued stays for the next start. */
  close(): Promise<void>;
}

/** Makes the outbox; the sender first looks at the table on the first `flush` (the portal's start). */
export function createOutbox(options: OutboxOptions): Outbox {
  const { db, transport, clock } = options;
  const settings = { ...DEFAULT_OUTBOX, ...options.settings };
  const log = (level: "warn" | "error", event: string, fields: Record<string, string | number>) =>
    options.log(JSON.stringify({ time: new Date(clock()).toISOString(), level, event, ...fields }));
  const errorOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

  async function sendRow(row: OutboxRow): Promise<void> {
    try {
      const mail = await prepareMail(db, row, options.publicUrl(), clock());
      if (mail) await transport.send(mail, row.id);
    } catch (err) {
      const about = { id: row.id, kind: row.kind, attempts: row.attempts, error: errorOf(err) };
      if (row.attempts >= settings.attempts) {
        log("error", "mail_dropped", { ...about, to: row.to });
        await deleteMail(db, row.id);
      } else {
        const retryMs = settings.firstRetryMs * 2 ** (row.attempts - 1);
        log("warn", "mail_retry", { ...about, retry_in_s: retryMs / 1000 });
        await retryMail(db, row, clock() + retryMs);
      }
      return;
    }
    await deleteMail(db, row.id);
  }

  /** Sends due rows, `senders` at a time, until none is left to claim. */
  async function pass(): Promise<void> {
    const sender = async () => {
      while (!stopped) {
        const now = clock();
        const row = await claimMail(db, now, now + settings.claimMs);
        if (!row) return;
        await sendRow(row);
      }
    };
    await Promise.all(Array.from({ length: settings.senders }, sender));
  }

  let stopped = false;
  let wanted = false; // a pass is asked for
  let started = 0; // passes begun
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  const waiters = new Set<{ pass: number; resolve: () => void }>();

  async function loop(): Promise<void> {
    while (wanted && !stopped) {
      wanted = false;
      const n = ++started;
      await pass().catch((err: unknown) => log("error", "outbox_failed", { error: errorOf(err) }));
      for (const w of waiters) {
        if (w.pass > n) continue;
        waiters.delete(w);
        w.resolve();
      }
    }
    running = null; // no await since the loop's condition was read: a wake from now on starts a new loop
    await schedule();
  }

  /** Looks again when the next row falls due, or after `pollMs` at most. */
  async function schedule(): Promise<void> {
    let delay = settings.pollMs;
    const due = await nextDue(db).catch(() => null);
    if (due !== null) delay = Math.min(delay, Math.max(MIN_POLL_MS, due - clock()));
    if (stopped || running) return;
    clearTimeout(timer);
    timer = setTimeout(() => void wake(), delay).unref();
  }

  function wake(): Promise<void> {
    if (stopped) return Promise.resolve();
    wanted = true;
    const done = new Promise<void>((resolve) => waiters.add({ pass: started + 1, resolve }));
    running ??= loop();
    return done;
  }

  return {
    async send(mail) {
      await queueMail(db, mail, clock());
      setImmediate(() => void wake()); // after the answer of the request that queued it is written
    },
    queued() {
      setImmediate(() => void wake());
    },
    flush: wake,
    async close() {
      stopped = true;
      clearTimeout(timer);
      await running;
      for (const w of waiters) w.resolve();
      waiters.clear();
    },
  };
}
