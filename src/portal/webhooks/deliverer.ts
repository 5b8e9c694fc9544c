// The webhook sender: claims due deliveries (queue.ts), signs each (signing.ts) and POSTs it (send.ts), then records
// the attempt and, on failure, when to try again (schedule.ts). A timer waits for the next delivery
// due (no polling every second; a look at least every `pollMs` for what other processes queued). An endpoint failing
// for `disableAfterMs` is disabled and its owners mailed through the outbox.
import type { PortalDatabase } from "../../db/database.ts";
import type { Scheduler } from "../../serve/events/instant-timer.ts";
import { errorLine } from "../../errors.ts";
import type { Mailer } from "../mailer.ts";
import { organisationRecipients } from "../security-mail.ts";
import { queueMail } from "../store/outbox-rows.ts";
import type { AddressGuard } from "./address-guard.ts";
import { finishAttempts } from "./attempts.ts";
import type { FinishedAttempt } from "./attempts.ts";
import { setEndpointEnabled } from "./endpoints.ts";
import type { Endpoint } from "./endpoints.ts";
import { MAX_BODY_BYTES, renderPayload } from "./payload.ts";
import { claimDue, nextDelivery, releaseClaims } from "./queue.ts";
import type { Claimed, StreamEvent } from "./queue.ts";
import { retryAt } from "./schedule.ts";
import { createSendPool } from "./connections.ts";
import type { SendPool } from "./connections.ts";
import { delivered, sendWebhook } from "./send.ts";
import type { AttemptResult } from "./send.ts";
import { createSecretCache, signedHeaders } from "./signing.ts";
import { warmDeliveries } from "./warm-up.ts";

/** How the sender works. */
export interface DelivererSettings {
  /** Deliveries in flight at once to one endpoint, over every process. */
  perEndpoint: number;
  /**
   * Deliveries being sent at once in this process (their requests in flight; an attempt whose answer came no longer
   * counts while its outcome waits to be written: its lease still counts against its endpoint's limit).
   */
  senders: number;
  /**
   * Deliveries claimed in one transaction, sent as senders come free: each claim reads every pending delivery, so a
   * few large claims cost less than many small ones. Each waits for at most claim / senders rounds of attempts before
   * its own: the lease outlasts (claim / senders + 1) x timeoutMs.
   */
  claim: number;
  /** One attempt's limit, ms. */
  timeoutMs: number;
  /** How long a claim keeps other senders off a delivery, ms: longer than an attempt. */
  leaseMs: number;
  /** An endpoint failing (no success) for this long is disabled at its next failure, ms. */
  disableAfterMs: number;
  /** The longest wait between looks at the queue, ms. */
  pollMs: number;
}

/**
 * Defaults: 4 at once an endpoint, 32 a process, claims of 128 (4 rounds: 50 s at most with 10 s attempts, under the
 * lease), 10 s an attempt, 60 s leases, disabled after 5 days, a look a minute.
 */
const DEFAULT_DELIVERER: DelivererSettings = {
  perEndpoint: 4,
  senders: 32,
  claim: 128,
  timeoutMs: 10_000,
  leaseMs: 60_000,
  disableAfterMs: 5 * 86_400_000,
  pollMs: 60_000,
};

export interface DelivererOptions {
  db: PortalDatabase;
  mailer: Mailer;
  /** The portal's key (PORTAL_SECRET_KEY), which unseals the secrets. */
  secretKey: Buffer;
  guard: AddressGuard;
  clock: () => number;
  log: (line: string) => void;
  publicUrl: () => string;
  /** A number in [0, 1) for the jitter. Default Math.random. */
  random?: () => number;
  /** Extra certificate authorities (tests' https receivers). */
  ca?: string;
  settings?: Partial<DelivererSettings>;
  /** The timer that waits for the next delivery due (tests: one on their clock). Default node's, unref'd. */
  scheduler?: Scheduler;
}

const NODE_TIMERS: Scheduler = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The wait before another look when deliveries are due but none could be claimed (endpoints at their limit), ms. */
const BUSY_WAIT_MS = 1000;

/** Endpoints' secrets kept unsealed in memory (signing.ts's createSecretCache): a sale's every endpoint, and more. */
const SECRETS_KEPT = 4096;

/** How long an attempt's outcome waits for others to be written with, ms: one commit for many at a sale's instant. */
const WRITE_EVERY_MS = 50;

/** The running sender. */
export interface Deliverer {
  /** Asks for a look at the queue (an event was queued). */
  wake: () => void;
  /**
   * Readies the delivery path before the first delivery (warm-up.ts: the enabled endpoints' secrets unsealed, the code
   * run on made-up data); sends nothing.
   */
  warm(): Promise<void>;
  /** Sends what is due now and waits until nothing is in flight. */
  flush(): Promise<void>;
  /** Stops claiming, waits for the attempts in flight, and gives back what was claimed and not sent. */
  close(): Promise<void>;
}

/** Makes the sender; it first looks at the queue on `wake` or `flush`. */
export function createDeliverer(options: DelivererOptions): Deliverer {
  const { db, clock } = options;
  const settings = { ...DEFAULT_DELIVERER, ...options.settings };
  const random = options.random ?? Math.random;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let running: Promise<void> | null = null;
  let wanted = false;
  const timers = options.scheduler ?? NODE_TIMERS;
  let timer: unknown;
  const pool = createSendPool();
  const unseal = createSecretCache(options.secretKey, SECRETS_KEPT);
  const logError = (event: string, err: unknown) =>
    options.log(JSON.stringify(errorLine("error", event, err, { at: clock() })));

  /** Attempts ended and not yet written, and whether a write is under way. */
  const ended: { attempt: FinishedAttempt; written: (since: number | null) => void; failed: (err: unknown) => void }[] =
    [];
  let writing = false;
  /** Writes what ended, those that end meanwhile in the next transaction: one commit for many (group commit). */
  async function writeEnded(): Promise<void> {
    try {
      while (ended.length > 0) {
        const batch = ended.splice(0);
        try {
          const since = await finishAttempts(
            db,
            batch.map((e) => e.attempt),
          );
          batch.forEach((e, i) => e.written(since[i] ?? null));
        } catch (err) {
          for (const e of batch) e.failed(err);
        }
      }
    } finally {
      writing = false;
    }
  }
  /** Records an attempt (with those ending meanwhile); resolves with its endpoint's failing streak's start. */
  const record = (attempt: FinishedAttempt) =>
    new Promise<number | null>((written, failed) => {
      ended.push({ attempt, written, failed });
      if (writing) return;
      writing = true;
      // The answers of the next WRITE_EVERY_MS are written with this one: SQLite's statements run on the thread and
      // its promises settle at once, so a write started here would run before the next answer is even read.
      setTimeout(() => void writeEnded(), WRITE_EVERY_MS);
    });

  /** One attempt: `sent` is called once its answer came (or it failed), before its outcome is written. */
  const attempt = async (c: Claimed, sent: () => void) => {
    let result: AttemptResult;
    try {
      result = await deliver(options, settings, { pool, unseal }, c);
    } finally {
      sent();
    }
    const now = clock();
    const ok = delivered(result);
    const failingSince = await record({ c, result, ok, retryAt: ok ? null : retryAt(c.attempts, now, random), now });
    if (failingSince !== null && now - failingSince >= settings.disableAfterMs)
      await disableFailing(options, c.endpoint, failingSince, now);
  };

  /** Deliveries claimed and waiting for a free sender: claimed `claim` at a time, not one as each send ends. */
  const ready: Claimed[] = [];

  /** Attempts being sent now (inFlight also holds those whose outcomes wait to be written). */
  let sending = 0;
  const start = (c: Claimed) => {
    sending++;
    let freed = false;
    // The sender is free for the next delivery once the answer came: outcomes wait up to WRITE_EVERY_MS to be written
    // together and then for the commit, and a sender held until then would send nothing meanwhile.
    const free = () => {
      if (freed) return;
      freed = true;
      sending--;
      wake();
    };
    const attempting: Promise<void> = attempt(c, free)
      .catch((err: unknown) => logError("webhook_attempt_failed", err))
      .finally(() => {
        inFlight.delete(attempting);
        free();
        wake();
      });
    inFlight.add(attempting);
  };

  /**
   * Starts what was claimed while senders are free, and claims the next `claim` due (in one transaction) once all
   * claimed are started: one claim for many sends, the next batch claimed while the last one's sends are in flight.
   */
  async function pass(): Promise<void> {
    while (!stopped) {
      while (ready.length > 0 && sending < settings.senders) start(ready.shift()!);
      if (ready.length > 0) return;
      const now = clock();
      const claimed = await claimDue(db, now, now + settings.leaseMs, settings.perEndpoint, settings.claim);
      if (claimed.length === 0) return;
      ready.push(...claimed);
    }
  }

  async function loop(): Promise<void> {
    while (wanted && !stopped) {
      wanted = false;
      await pass().catch((err: unknown) => logError("webhooks_failed", err));
    }
    running = null;
    // With sends in flight, the end of each wakes the loop: the queue is looked at again once none is.
    if (inFlight.size === 0) await schedule();
  }

  /** Looks again when the next delivery falls due, or after `pollMs` at most. */
  async function schedule(): Promise<void> {
    const due = await nextDelivery(db).catch(() => null);
    if (stopped || running) return;
    // Due already, after a pass that claimed what it could: held by endpoints at their limit (their sends wake us as
    // they end; another process's, not), so look again in a second rather than at once.
    const wait = due === null ? settings.pollMs : due - clock();
    const delay = Math.min(settings.pollMs, wait > 0 ? wait : BUSY_WAIT_MS);
    timers.clearTimeout(timer);
    timer = timers.setTimeout(wake, delay);
  }

  function wake(): void {
    if (stopped) return;
    wanted = true;
    running ??= loop();
  }

  return {
    wake,
    async warm() {
      await warmDeliveries(db, options.guard, unseal, SECRETS_KEPT, clock());
    },
    async flush() {
      do {
        wake();
        await running;
        await Promise.all([...inFlight]);
        // A send's end may have started another pass (claiming the next batch) meanwhile: wait for it too.
      } while (wanted || running !== null || inFlight.size > 0 || ready.length > 0);
    },
    async close() {
      stopped = true;
      timers.clearTimeout(timer);
      await running;
      await Promise.all([...inFlight]);
      pool.close();
      // Claimed and not sent: free for the next process at once, their attempt not counted.
      await releaseClaims(db, ready.splice(0)).catch((err: unknown) => logError("webhook_release_failed", err));
    },
  };
}

/**
 * Bodies by event and affid: a claim's deliveries of one event share its object (queue.ts), and those to endpoints
 * with the same affid (most have none) the same body, rendered once.
 */
const bodies = new WeakMap<StreamEvent, Map<string, Buffer>>();

/** The body of the delivery `c`. */
function bodyOf(c: Claimed): Buffer {
  let byAffid = bodies.get(c.event);
  if (!byAffid) bodies.set(c.event, (byAffid = new Map<string, Buffer>()));
  let body = byAffid.get(c.endpoint.affid);
  if (!body) byAffid.set(c.endpoint.affid, (body = renderPayload(c.event, c.endpoint.affid, c.received)));
  return body;
}

/** One attempt at `c`: its body, signed with the endpoint's secrets (both during a rotation's overlap), sent. */
async function deliver(
  options: DelivererOptions,
  settings: DelivererSettings,
  { pool, unseal }: { pool: SendPool; unseal: (endpointId: string, sealed: string) => string | null },
  c: Claimed,
): Promise<AttemptResult> {
  const now = options.clock();
  const body = bodyOf(c);
  if (body.length > MAX_BODY_BYTES)
    return { status: 0, latencyMs: 0, answer: `not sent: the body is ${body.length} bytes, over ${MAX_BODY_BYTES}` };
  const sealed = [
    c.endpoint.secret,
    ...(c.endpoint.previous && c.endpoint.previousUntil > now ? [c.endpoint.previous] : []),
  ];
  const secrets = sealed.map((s) => unseal(c.endpoint.id, s)).filter((s) => s !== null);
  if (secrets.length === 0) return { status: 0, latencyMs: 0, answer: "not sent: the secret cannot be unsealed" };
  const headers = signedHeaders(secrets, c.event.id, Math.floor(now / 1000), body);
  return sendWebhook(c.endpoint.url, headers, body, {
    guard: options.guard,
    timeoutMs: settings.timeoutMs,
    ca: options.ca,
    pool,
  });
}

/** Disables an endpoint that kept failing and mails its organisation's owners (once: the change is made once). */
async function disableFailing(options: DelivererOptions, e: Endpoint, since: number, now: number): Promise<void> {
  const days = Math.floor((now - since) / 86_400_000);
  const reason = `every attempt failed for ${days} days (since ${new Date(since).toISOString().slice(0, 16)} UTC)`;
  const recipients = await organisationRecipients(options.db, e.orgId);
  const mail = {
    subject: "A webhook endpoint was disabled on the developer portal",
    text:
      `The webhook endpoint ${e.url} was disabled: ${reason}.\n\nNo events are sent to it until a member enables it ` +
      `again at ${options.publicUrl()}/webhooks/${e.id}. Deliveries that had not failed for good are sent then.\n`,
  };
  const done = await options.db.transaction(async (tx) => {
    if ((await setEndpointEnabled(tx, e.id, false, reason)) !== 1) return false;
    for (const to of recipients) await queueMail(tx, { to, ...mail }, now);
    return true;
  });
  if (done) options.mailer.queued();
}
