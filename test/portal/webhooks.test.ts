// Issue 38's webhooks over real HTTP on SQLite: the portal reads the real API's event stream (test/helpers/fixture.ts,
// its timers on an injected clock) and POSTs each event to real receivers on 127.0.0.1 (WEBHOOKS_ALLOW=loopback),
// signed so that the `standardwebhooks` package verifies them (with both secrets during a rotation's overlap), the
// affid spliced as the API's own stream has it; a receiver that is down gets every event once it is back, at the
// retry schedule's times (the portal's clock moved, no sleeping); a portal restarted mid-retry loses nothing.
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { pruneWebhooks, RETENTION_MS } from "../../src/portal/webhooks/retention.ts";
import { RETRY_SCHEDULE_MS } from "../../src/portal/webhooks/schedule.ts";
import { T0, standardCatalog, startTestApi, withKey } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { clockScheduler, openSse, poll } from "../helpers/sse.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";
import { heldTimers, startReceiver } from "./webhook-receiver.ts";
import type { Receiver } from "./webhook-receiver.ts";

const H = 3600;
const LOOPBACK = ["127.0.0.0/8", "::1/128"];
const secretKey = randomBytes(32);
let smtp: SmtpServer;
const opened: { close(): unknown }[] = [];
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(() => smtp.stop());
afterEach(async () => {
  for (const c of opened.splice(0).reverse()) await c.close();
});

/** The test API with its event timers on its clock, at T0 + 1 h. */
async function startApi() {
  const made: { api?: TestApi } = {};
  const timers = clockScheduler({
    get now() {
      return made.api ? made.api.clock.now : T0;
    },
    set now(v: number) {
      made.api!.clock.now = v;
    },
  });
  const api = (made.api = await startTestApi(standardCatalog(), { events: { scheduler: timers.scheduler } }));
  api.clock.now = T0 + H;
  opened.push(api);
  return Object.assign(api, { advanceTo: timers.advanceTo });
}

/** A portal reading `api`'s stream, with a signed-in owner. */
async function startPortal(api: TestApi, options: { databaseUrl?: string; now?: number } = {}) {
  const timers = heldTimers();
  const portal = await startTestPortal(smtp, {
    apiUrl: api.url,
    secretKey,
    webhookSettings: { apiKey: api.key, allow: LOOPBACK, random: () => 0.5, scheduler: timers.scheduler },
    // The clock moves days here: sessions outlive it.
    sessionLimits: { idleMs: 30 * 86_400_000, absoluteMs: 30 * 86_400_000 },
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
  });
  if (options.now) portal.clock.now = options.now;
  opened.push(portal);
  await poll(() => portal.webhooks!.reader!.open);
  return Object.assign(portal, { waits: timers.waits });
}

let n = 0;
async function owner(portal: TestPortal) {
  const client = new PortalClient(portal.url);
  await signUpAndVerify(client, smtp, { email: `owner-${n++}@example.test` });
  return client;
}

/** Adds an endpoint from the list's form; returns its ID and the secret the page showed once. */
async function addEndpoint(client: PortalClient, fields: Record<string, string>) {
  await client.get("/webhooks");
  const page = await client.post("/webhooks", fields);
  expect(page.status, page.text).toBe(200);
  const secret = /value="(whsec_[A-Za-z0-9+/=]+)"/.exec(page.text)![1]!;
  const id = /^\/webhooks\/([a-z0-9]{16})\?/.exec(page.url)![1]!; // the page the form redirected to
  return { id, secret };
}

const ALL_TYPES = { "sale.announced": "on", "sale.begins": "on", "sale.ends": "on", "sale.updated": "on" };

/** Waits until the portal has read `count` events, then sends what is due. */
async function delivered(portal: TestPortal, count: number) {
  await poll(() => portal.webhooks!.reader!.recorded >= count);
  await portal.webhooks!.deliverer.flush();
}

const headersOf = (r: Receiver, i: number) => r.received[i]!.headers as Record<string, string>;

describe("webhooks' deliveries", () => {
  it("sends the stream's events signed (standardwebhooks verifies them), with affid, filtered, through a rotation", async () => {
    const api = await startApi();
    const receiver = await startReceiver();
    opened.push(receiver);
    const portal = await startPortal(api);
    const client = await owner(portal);
    const a = await addEndpoint(client, { url: `${receiver.url}/a`, ...ALL_TYPES, affid: "partner7" });
    await addEndpoint(client, { url: `${receiver.url}/b`, "sale.ends": "on", stores: "home" });
    const own = await openSse(api.url + withKey(api, "/v1/events", "affid=partner7"));
    opened.push(own);

    api.advanceTo(T0 + 2 * H); // "soon" (home) begins
    await delivered(portal, 1);
    expect(receiver.received.map((r) => r.path)).toEqual(["/a"]);
    const payload = new Webhook(a.secret).verify(receiver.received[0]!.body, headersOf(receiver, 0)) as {
      type: string;
      data: { sale: { sale_url: string }; at: string };
    };
    await own.until(() => own.events.length === 1);
    expect(payload.type).toBe("sale.begins");
    expect(receiver.received[0]!.id).toBe(own.events[0]!.id);
    const streamed = JSON.parse(own.events[0]!.data) as { sale: unknown; at: string };
    expect(payload.data.sale).toEqual(streamed.sale); // the API's own affid splice, byte for byte once parsed
    expect(payload.data.sale.sale_url).toContain("&affid=partner7");
    expect(payload.data.at).toBe(streamed.at);

    api.advanceTo(T0 + 5 * H); // "soon" ends: both endpoints want it
    await delivered(portal, 2);
    expect(receiver.received.map((r) => r.path).sort()).toEqual(["/a", "/a", "/b"]);

    // A replay of the range of both events' instants sends them to /a again, with the same IDs.
    const sent = receiver.received.filter((r) => r.path === "/a").map((r) => r.id);
    await client.get(`/webhooks/${a.id}`);
    const replay = await client.post(`/webhooks/${a.id}/replay`, { from: "2026-11-22T19:00", to: "2026-11-22T22:00" });
    expect(replay.text).toContain("2 events will be sent again.");
    await portal.webhooks!.deliverer.flush();
    expect(receiver.received.slice(3).map((r) => `${r.path} ${r.id}`)).toEqual(sent.map((id) => `/a ${id}`));

    // A rotation with 24 hours' overlap: a delivery carries both signatures, and either secret verifies it.
    await client.get(`/webhooks/${a.id}`);
    const rotated = await client.post(`/webhooks/${a.id}/rotate`, { grace: "24h" });
    const next = /value="(whsec_[A-Za-z0-9+/=]+)"/.exec(rotated.text)![1]!;
    expect(next).not.toBe(a.secret);
    await client.get(`/webhooks/${a.id}`);
    await client.post(`/webhooks/${a.id}/test`, {});
    await portal.webhooks!.deliverer.flush();
    const test = receiver.received.length - 1;
    expect(headersOf(receiver, test)["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const secret of [a.secret, next])
      expect(new Webhook(secret).verify(receiver.received[test]!.body, headersOf(receiver, test))).toMatchObject({
        type: "webhook.test",
      });
    // Rotated again without overlap: only the newest secret signs.
    await client.post(`/webhooks/${a.id}/rotate`, { grace: "now" });
    const newest = /value="(whsec_[A-Za-z0-9+/=]+)"/.exec(client.last!.text)![1]!;
    await client.get(`/webhooks/${a.id}`);
    await client.post(`/webhooks/${a.id}/test`, {});
    await portal.webhooks!.deliverer.flush();
    const last = receiver.received.length - 1;
    expect(() => new Webhook(newest).verify(receiver.received[last]!.body, headersOf(receiver, last))).not.toThrow();
    expect(() => new Webhook(next).verify(receiver.received[last]!.body, headersOf(receiver, last))).toThrow();
  });
});

describe("webhooks' retries", () => {
  it("sends a receiver that was down every event once it is back, at the retry schedule's times", async () => {
    const api = await startApi();
    const receiver = await startReceiver();
    opened.push(receiver);
    const portal = await startPortal(api);
    const client = await owner(portal);
    const { id } = await addEndpoint(client, { url: `${receiver.url}/down`, ...ALL_TYPES });
    receiver.answer = () => 503;
    api.advanceTo(T0 + 2 * H); // begins
    await delivered(portal, 1);
    api.advanceTo(T0 + 5 * H); // ends
    await delivered(portal, 2);
    expect(receiver.received).toHaveLength(2);
    // The sender's timer is armed for the first retry's instant exactly (not a poll).
    expect(portal.waits.at(-1)).toBe(RETRY_SCHEDULE_MS[0]);
    // Each retry falls due at its wait (jitter 1.0 here), and not a millisecond before.
    for (const wait of RETRY_SCHEDULE_MS.slice(0, 4)) {
      const before = receiver.received.length;
      portal.clock.now += wait - 1;
      await portal.webhooks!.deliverer.flush();
      expect(receiver.received.length).toBe(before);
      portal.clock.now += 1;
      await portal.webhooks!.deliverer.flush();
      expect(receiver.received.length).toBe(before + 2);
    }
    receiver.answer = () => 200; // back
    portal.clock.now += RETRY_SCHEDULE_MS[4]!;
    await portal.webhooks!.deliverer.flush();
    const ids = [...new Set(receiver.received.map((r) => r.id))];
    expect(ids).toHaveLength(2);
    expect(receiver.received).toHaveLength(12); // 5 failed attempts of each, then one delivery each
    const log = (await client.get(`/webhooks/${id}`)).text;
    expect(log.match(/<td>503<\/td>/g)).toHaveLength(10);
    expect(log.match(/<code>answer 200<\/code>/g)).toHaveLength(2);
    portal.clock.now += 86_400_000;
    await portal.webhooks!.deliverer.flush();
    expect(receiver.received).toHaveLength(12); // delivered: never sent again
    // A month on, the log, the finished deliveries and their events are deleted; a pending delivery's event is kept.
    const count = async (table: string) => Number((await portal.db.all(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n);
    expect([await count("webhook_attempts"), await count("webhook_events")]).toEqual([12, 2]);
    portal.clock.now += RETENTION_MS;
    await pruneWebhooks(portal.db, portal.clock.now);
    expect([await count("webhook_attempts"), await count("webhook_deliveries"), await count("webhook_events")]).toEqual(
      [0, 0, 0],
    );
  });

  it("loses nothing when the portal restarts mid-retry: the retry and the events of its downtime are sent", async () => {
    const api = await startApi();
    const receiver = await startReceiver();
    opened.push(receiver);
    const first = await startPortal(api);
    const client = await owner(first);
    await addEndpoint(client, { url: `${receiver.url}/r`, ...ALL_TYPES });
    receiver.answer = () => 500;
    api.advanceTo(T0 + 2 * H); // begins: its first attempt fails
    await delivered(first, 1);
    expect(receiver.received).toHaveLength(1);
    const now = first.clock.now;
    await first.close();
    opened.splice(opened.indexOf(first), 1);

    api.advanceTo(T0 + 5 * H); // ends, while no portal reads the stream
    receiver.answer = () => 204;
    const again = await startPortal(api, { databaseUrl: `${first.dir}/portal.db`, now });
    await poll(() => again.webhooks!.reader!.recorded >= 1); // resumed after the last event recorded
    await again.webhooks!.deliverer.flush();
    const delivered204 = () => receiver.received.filter((r) => r.path === "/r").map((r) => r.id);
    expect(delivered204()).toHaveLength(2); // the failed one, then "ends" (the retry is not due yet)
    again.clock.now += RETRY_SCHEDULE_MS[0]!;
    await again.webhooks!.deliverer.flush();
    expect(new Set(delivered204()).size).toBe(2);
    expect(receiver.received).toHaveLength(3);
  });
});
