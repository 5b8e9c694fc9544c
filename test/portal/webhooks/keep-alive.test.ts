// The sender's kept-alive connections (connections.ts's pool), against a real receiver on 127.0.0.1 that counts the
// connections it accepts: deliveries to one origin reuse one connection; a new connection still goes through the
// address guard's lookup, so a name that now resolves to a refused address is refused though a connection made
// before is reused; an answer longer than the sender reads is not read to its end (its connection is closed, not
// kept). A kept-alive connection the receiver closes as the next delivery arrives on it (a raw receiver that destroys
// the connection at the second request's first bytes) does not fail that delivery: it is sent once more at once on a
// new connection, delivered at its first attempt (one attempt in the log).
import { randomBytes } from "node:crypto";
import type { lookup } from "node:dns";
import { once } from "node:events";
import { createServer } from "node:http";
import type { Server, ServerResponse } from "node:http";
import { createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { openDatabase } from "../../../src/db/database.ts";
import { migrate } from "../../../src/db/migrations.ts";
import { createAccount } from "../../../src/portal/store/accounts.ts";
import { createAddressGuard } from "../../../src/portal/webhooks/address-guard.ts";
import { insertEndpoint, newEndpointId } from "../../../src/portal/webhooks/endpoints.ts";
import { recordEvents } from "../../../src/portal/webhooks/queue.ts";
import { newWebhookSecret, sealWebhookSecret } from "../../../src/portal/webhooks/signing.ts";
import { createSendPool } from "../../../src/portal/webhooks/connections.ts";
import type { SendPool } from "../../../src/portal/webhooks/connections.ts";
import { sendWebhook } from "../../../src/portal/webhooks/send.ts";
import { tempDir } from "../../helpers/fixture.ts";
import { heldDeliverer } from "../webhook-receiver.ts";

const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of opened.splice(0).reverse()) await c.close();
});

/** A receiver answering each request with `answer` (default a short 200), counting the connections it accepted. */
async function receiver(answer: (res: ServerResponse) => void = (res) => res.end("ok")) {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(res));
  });
  let connections = 0;
  server.on("connection", () => connections++);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  opened.push({
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  });
  return { port: (server.address() as { port: number }).port, connections: () => connections, server };
}

function pool(): SendPool {
  const a = createSendPool();
  opened.push(a);
  return a;
}

/** A resolver answering `address.now` for every name (a name whose address the test changes: DNS rebinding). */
function rebinding(address: { now: string }) {
  return ((_h: string, _o: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) =>
    cb(null, [{ address: address.now, family: 4 }])) as unknown as typeof lookup;
}

const post = (url: string, options: Parameters<typeof sendWebhook>[3]) =>
  sendWebhook(url, { "webhook-id": "msg_1" }, Buffer.from('{"type":"sale.begins"}'), options);

it("reuses one connection for deliveries to one origin", async () => {
  const r = await receiver();
  const options = { guard: createAddressGuard(["127.0.0.1"]), timeoutMs: 5_000, pool: pool() };
  for (let i = 0; i < 5; i++)
    expect(await post(`http://127.0.0.1:${r.port}/e/${i}`, options)).toMatchObject({ status: 200, answer: "ok" });
  expect(r.connections()).toBe(1);
});

it("refuses a new connection to a name now resolved to a refused address, while reusing the one made before", async () => {
  const r = await receiver();
  const address = { now: "127.0.0.1" };
  const guard = createAddressGuard(["127.0.0.1"], rebinding(address));
  const pools = pool();
  const options = { guard, timeoutMs: 5_000, pool: pools };
  const url = `http://receiver.example.test:${r.port}/hook`;
  expect((await post(url, options)).status).toBe(200);
  address.now = "127.0.0.2"; // loopback, not allowed: refused
  // Two at once: one takes the idle connection (checked when it was made), the other needs a new one: refused.
  const both = await Promise.all([post(url, options), post(url, options)]);
  expect(both.map((b) => b.status).sort()).toEqual([0, 200]);
  expect(both.find((b) => b.status === 0)!.answer).toMatch(/^refused: plain http is allowed only .*127\.0\.0\.2/);
  // The receiver closes the idle connection: the next delivery needs a new one, refused too.
  const idle = pools.idle();
  expect(idle).toHaveLength(1);
  const closed = once(idle[0]!, "close");
  r.server.closeIdleConnections();
  await closed;
  expect((await post(url, options)).answer).toMatch(/^refused: .*127\.0\.0\.2/);
  expect(r.connections()).toBe(1);
});

it("reads no further than 1 KiB of a long answer and closes its connection", async () => {
  const total = 64 * 1024 * 1024;
  let ended!: (finished: boolean) => void;
  const answered = new Promise<boolean>((resolve) => (ended = resolve));
  const r = await receiver((res) => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": String(total) });
    const chunk = Buffer.alloc(64 * 1024, "a");
    let sent = 0;
    const more = () => {
      while (sent < total) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", more);
      }
      res.end();
    };
    res.on("close", () => ended(res.writableFinished));
    more();
  });
  const options = { guard: createAddressGuard(["127.0.0.1"]), timeoutMs: 5_000, pool: pool() };
  const result = await post(`http://127.0.0.1:${r.port}/big`, options);
  expect(result.status).toBe(200);
  expect(result.answer.length).toBeLessThanOrEqual(1024);
  expect(await answered).toBe(false); // the connection was closed before the receiver could write its whole answer
  expect((await post(`http://127.0.0.1:${r.port}/big`, options)).status).toBe(200);
  expect(r.connections()).toBe(2); // not kept: the next delivery made a new connection
});

/**
 * A raw receiver: on each connection it answers the first request 200 with keep-alive, and destroys the connection
 * when the bytes of a next request arrive on it (a receiver closing an idle connection as a delivery is sent on it).
 */
async function closingReceiver() {
  const answered: string[] = [];
  let connections = 0;
  const server = createNetServer((socket) => {
    connections++;
    let buffered = Buffer.alloc(0);
    let done = false;
    socket.on("data", (chunk: Buffer) => {
      if (done) return void socket.destroy();
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      done = true;
      answered.push(/\r\nwebhook-id: *(\S+)/i.exec(head)?.[1] ?? "");
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok");
    });
    socket.on("error", () => {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  opened.push({ close: () => new Promise((resolve) => server.close(resolve)) });
  return { port: (server.address() as { port: number }).port, answered, connections: () => connections };
}

it("sends a delivery once more on a new connection when the receiver closes the kept-alive one under it", async () => {
  const r = await closingReceiver();
  const NOW = Date.parse("2026-11-22T19:00:00Z");
  const secretKey = randomBytes(32);
  const db = await openDatabase(join(await tempDir("fsa-wh-stale-"), "portal.db"));
  opened.push(db);
  await migrate(db, NOW);
  const orgId = (await createAccount(db, { email: "o@example.test", partner: "P", password: "!" }, NOW))!.id;
  const id = newEndpointId();
  await insertEndpoint(db, {
    id,
    orgId,
    url: `http://127.0.0.1:${r.port}/hook`,
    types: ["sale.begins"],
    stores: [],
    affid: "",
    secret: sealWebhookSecret(secretKey, id, newWebhookSecret()),
    created: NOW,
    createdBy: "o@example.test",
  });
  const d = heldDeliverer(db, secretKey, NOW);
  opened.push(d);
  const event = (n: number) => ({
    id: `${NOW / 1000 + n}.1.AAAAAAAAAAAAAAA${n}`,
    type: "sale.begins",
    data: JSON.stringify({ sale: { store: "women" }, at: new Date(NOW).toISOString() }),
  });
  await recordEvents(db, "events", [event(0)], NOW);
  await d.flush();
  await recordEvents(db, "events", [event(1)], NOW);
  await d.flush();
  expect(r.answered).toEqual([event(0).id, event(1).id]);
  expect(r.connections()).toBe(2); // the kept one, closed under the second delivery, and the resend's
  const deliveries = await db.all("SELECT state, attempts FROM webhook_deliveries");
  expect(deliveries).toEqual([
    { state: "delivered", attempts: 1 },
    { state: "delivered", attempts: 1 },
  ]);
  expect(await db.all("SELECT status FROM webhook_attempts")).toEqual([{ status: 200 }, { status: 200 }]);
});
