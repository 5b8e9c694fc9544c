// Webhooks as the portal starts them: the address guard, the sender (deliverer.ts), and the reader of the API's event
// stream (stream-reader.ts) when the portal has an API key of its own for it. Without PORTAL_SECRET_KEY (which seals
// the secrets) there are no webhooks.
import type { lookup as dnsLookup } from "node:dns";
import type { PortalDatabase } from "../../db/database.ts";
import type { Scheduler } from "../../serve/events/instant-timer.ts";
import { errorLine } from "../../errors.ts";
import type { Mailer } from "../mailer.ts";
import { createAddressGuard } from "./address-guard.ts";
import type { AddressGuard } from "./address-guard.ts";
import { createDeliverer } from "./deliverer.ts";
import type { Deliverer, DelivererSettings } from "./deliverer.ts";
import { PRUNE_EVERY_MS, pruneWebhooks } from "./retention.ts";
import { startStreamReader } from "./stream-reader.ts";
import type { StreamReader } from "./stream-reader.ts";

/** The webhooks' settings, as the portal is started with them. */
export interface WebhookSettings {
  /** WEBHOOKS_API_KEY: the key the portal reads the API's event stream with; unset: no events are read. */
  apiKey?: string | undefined;
  /** WEBHOOKS_ALLOW: addresses and networks sent to though not public (and by plain http). Default none. */
  allow?: readonly string[];
  /** The sender's settings. Default DEFAULT_DELIVERER. */
  deliverer?: Partial<DelivererSettings>;
  /** Jitter's random numbers (tests). Default Math.random. */
  random?: () => number;
  /** Extra certificate authorities (tests' https receivers). */
  ca?: string;
  /** The sender's timer (tests). Default node's. */
  scheduler?: Scheduler;
  /** The resolver the guard asks (tests). Default node:dns lookup. */
  resolve?: typeof dnsLookup;
}

/** Running webhooks. */
export interface Webhooks {
  guard: AddressGuard;
  deliverer: Deliverer;
  reader: StreamReader | null;
  wake: () => void;
  close(): Promise<void>;
}

/** Starts the sender (and the stream's reader, with an API key); null without the portal's secret key. */
export function startWebhooks(options: {
  db: PortalDatabase;
  mailer: Mailer;
  secretKey: Buffer | null;
  apiUrl: string;
  clock: () => number;
  log: (line: string) => void;
  publicUrl: () => string;
  settings: WebhookSettings;
}): Webhooks | null {
  const { db, secretKey, clock, log, settings } = options;
  if (!secretKey) return null;
  const guard = createAddressGuard(settings.allow ?? [], settings.resolve);
  const deliverer = createDeliverer({
    db,
    mailer: options.mailer,
    secretKey,
    guard,
    clock,
    log,
    publicUrl: options.publicUrl,
    ...(settings.random ? { random: settings.random } : {}),
    ...(settings.ca ? { ca: settings.ca } : {}),
    ...(settings.scheduler ? { scheduler: settings.scheduler } : {}),
    ...(settings.deliverer ? { settings: settings.deliverer } : {}),
  });
  const reader = settings.apiKey
    ? startStreamReader({ db, apiUrl: options.apiUrl, apiKey: settings.apiKey, clock, log, queued: deliverer.wake })
    : null;
  // Readied before the first burst (a sale's instant meeting a fresh process), then deliveries left due by an earlier run.
  void deliverer
    .warm()
    .catch((err: unknown) => log(JSON.stringify(errorLine("error", "webhook_warm_up_failed", err, { at: clock() }))))
    .finally(deliverer.wake);
  const prune = () =>
    pruneWebhooks(db, clock()).catch((err: unknown) =>
      log(JSON.stringify(errorLine("error", "webhook_prune_failed", err, { at: clock() }))),
    );
  let pruning = prune();
  const pruneTimer = setInterval(() => {
    pruning = pruning.then(prune);
  }, PRUNE_EVERY_MS).unref();
  return {
    guard,
    deliverer,
    reader,
    wake: deliverer.wake,
    close: async () => {
      clearInterval(pruneTimer);
      await pruning;
      await reader?.close();
      await deliverer.close();
    },
  };
}
