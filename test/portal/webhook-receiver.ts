// A webhook receiver for the tests: a real node http server on 127.0.0.1:0 that records every request (headers and
// body), answers the status `answer` says (default 204), and counts the requests in flight at once; and the sender
// as tests drive it (heldDeliverer: its timer held, flushed by the test).
import { createServer } from "node:http";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { once } from "node:events";
import type { PortalDatabase } from "../../src/db/database.ts";
import { createAccount } from "../../src/portal/store/accounts.ts";
import { createAddressGuard } from "../../src/portal/webhooks/address-guard.ts";
import { createDeliverer } from "../../src/portal/webhooks/deliverer.ts";
import type { DelivererOptions } from "../../src/portal/webhooks/deliverer.ts";
import { insertEndpoint, newEndpointId } from "../../src/portal/webhooks/endpoints.ts";
import { newWebhookSecret, sealWebhookSecret } from "../../src/portal/webhooks/signing.ts";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The webhook-id header. */
  id: string;
  path: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The status to answer the next requests with (a function of the request; 0: a dropped connection). */
  answer: (r: Received, res: ServerResponse) => number;
  /** The most requests in flight at once so far. */
  maxInFlight: number;
  /** How long each answer waits, ms (to let requests overlap). */
  delayMs: number;
  close: () => Promise<void>;
}

/** Starts a receiver. */
export async function startReceiver(): Promise<Receiver> {
  let inFlight = 0;
  const receiver: Receiver = {
    url: "",
    received: [],
    answer: () => 204,
    maxInFlight: 0,
    delayMs: 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((req, res) => {
    inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight);
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const r = {
        headers: req.headers,
        body: Buffer.concat(parts).toString("utf8"),
        id: String(req.headers["webhook-id"]),
        path: req.url ?? "",
      };
      receiver.received.push(r);
      setTimeout(() => {
        inFlight--;
        const status = receiver.answer(r, res);
        if (status === 0) return void res.destroy();
        if (!res.headersSent) res.writeHead(status, { "content-type": "text/plain" }).end(`answer ${status}`);
      }, receiver.delayMs);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  server.keepAliveTimeout = 1;
  const close = receiver.close;
  receiver.close = async () => {
    server.closeAllConnections();
    await close();
  };
  return receiver;
}

/**
 * The sender's timer held: it records each wait asked for and never fires (the tests call `flush` as they move the
 * clock), so that no real timer sends a retry while a test looks.
 */
export function heldTimers() {
  const waits: number[] = [];
  return {
    waits,
    scheduler: {
      setTimeout: (_fn: () => void, ms: number) => waits.push(ms),
      clearTimeout: () => {},
    },
  };
}

/**
 * A sender on `db` as the portal makes one, for tests that call `flush` themselves: loopback allowed, its timer held
 * (heldTimers), the clock fixed at `now`, mail and log dropped.
 */
export function heldDeliverer(
  db: PortalDatabase,
  secretKey: Buffer,
  now: number,
  settings?: DelivererOptions["settings"],
) {
  return createDeliverer({
    db,
    mailer: { send: () => Promise.resolve(), queued: () => {} },
    secretKey,
    guard: createAddressGuard(["127.0.0.0/8"]),
    clock: () => now,
    log: () => {},
    publicUrl: () => "http://portal.example.test",
    scheduler: heldTimers().scheduler,
    ...(settings ? { settings } : {}),
  });
}

/**
 * `count` endpoints in `db` wanting sale.begins, 20 an organisation (the portal's limit), each with its own secret
 * sealed under `secretKey`, the n-th at `urlOf(n)`.
 */
export async function seedEndpoints(
  db: PortalDatabase,
  secretKey: Buffer,
  count: number,
  urlOf: (n: number) => string,
  now: number,
): Promise<void> {
  let orgId = "";
  for (let n = 0; n < count; n++) {
    if (n % 20 === 0)
      orgId = (await createAccount(db, { email: `o${n}@example.test`, partner: "P", password: "!" }, now))!.id;
    const id = newEndpointId();
    const secret = sealWebhookSecret(secretKey, id, newWebhookSecret());
    const endpoint = { id, orgId, url: urlOf(n), types: ["sale.begins"], stores: [], affid: "" };
    await insertEndpoint(db, { ...endpoint, secret, created: now, createdBy: "o@example.test" });
  }
}
