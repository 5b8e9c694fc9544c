// Issue 38's "two delivering processes on PostgreSQL never send one attempt twice", with two processes: two portals as
// deployed (`tsx src/cli/portal.ts`: DATABASE_URL on one real PostgreSQL, PORTAL_SECRET_KEY, WEBHOOKS_ALLOW, port 0)
// deliver the same queue to slow receivers on 127.0.0.1. Every (webhook-id, endpoint) arrives once, never more than an
// endpoint's limit at a time over both, and both processes send some: each receiver asks the kernel which process holds
// the connection a request came on (/proc/net/tcp and /proc/<pid>/fd). A receiver that fails each first attempt (5xx)
// gets each event again at the retry schedule's first wait (5 s, real time: no setting shortens it), claimed by
// whichever process comes first, each retry sent once. The queue is fed through recordEvents from this process (a
// third pool), and both senders woken at once by a test event sent from each portal's page (a sender otherwise looks
// at the queue a minute after its last look, for what other processes queued).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.ts";
import type { PortalDatabase } from "../../src/db/database.ts";
import { recordEvents } from "../../src/portal/webhooks/queue.ts";
import { tempDir } from "../helpers/fixture.ts";
import { stopProcess, watchOutput } from "../helpers/processes.ts";
import type { Watched } from "../helpers/processes.ts";
import { withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { PortalClient, signUpAndVerify } from "./portal-client.ts";
import type { SmtpServer } from "./smtp-server.ts";
import { startReceiver } from "./webhook-receiver.ts";
import type { Receiver } from "./webhook-receiver.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
/**
 * Endpoints (a receiver each, 20 an organisation): their slots (ENDPOINTS x PER_ENDPOINT, 200) more than one process
 * holds claims on (160: deliverer.ts's 32 senders in flight and a claim of 128 ahead).
 */
const ENDPOINTS = 50;
/** The most endpoints an organisation may have (webhook-routes.ts). */
const PER_ORGANISATION = 20;
/** The portal's limit of deliveries in flight to one endpoint: deliverer.ts's default, which no setting changes. */
const PER_ENDPOINT = 4;
/** How long the deliveries may take, ms: a deadline, not a wait (each wait ends as its condition is met). */
const DEADLINE_MS = 60_000;

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

/** A running portal process: its URL and pid. */
interface Child extends Watched {
  url: string;
  pid: number;
}

/** `npm run portal` (src/cli/portal.ts run by tsx) on 127.0.0.1:0 with `env`; resolves once it serves. */
async function startPortalProcess(env: Record<string, string>): Promise<Child> {
  const all: NodeJS.ProcessEnv = { ...process.env, PORTAL_HOST: "127.0.0.1", PORTAL_PORT: "0", ...env };
  for (const name of ["PORTAL_URL", "KEYS_SYNC", "REDIS_URL", "WEBHOOKS_API_KEY"]) delete all[name];
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/portal.ts"], {
    cwd: REPO,
    env: all,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let errors = "";
  child.stderr.on("data", (c: Buffer) => (errors += c.toString()));
  const watched = watchOutput(child, "stdout");
  const line = await watched.waitFor(/serving the developer portal on \S+/).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${errors}`);
  });
  return { ...watched, url: line.split(" ").at(-1)!, pid: child.pid! };
}

/** The process of `pids` that holds the TCP connection from local port `from` to local port `to`, read from /proc. */
function connectionOwner(pids: readonly number[], from: number, to: number): number | undefined {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  let inode: string | undefined;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"])
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(hex(from)) && f[2]?.endsWith(hex(to)) && f[9] !== "0") inode = f[9];
    }
  if (!inode) return undefined;
  for (const pid of pids)
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
      } catch {
        // closed meanwhile
      }
    }
  return undefined;
}

/** One request as a receiver saw it: the webhook-id, the process that sent it, and the status answered. */
interface Sent {
  id: string;
  pid: number | undefined;
  status: number;
}

/**
 * Receivers that answer after `delayMs`, each recording the process that sent each request; `status` chooses the
 * answer from the requests of that ID so far. `until` resolves when `done` holds of every receiver's requests (checked
 * as each arrives), and fails at the deadline.
 */
async function startReceivers(
  count: number,
  pids: readonly number[],
  delayMs: number,
  status: (earlier: Sent[]) => number,
) {
  const sent: Sent[][] = [];
  const checks = new Set<() => void>();
  const receivers: Receiver[] = [];
  for (let i = 0; i < count; i++) {
    const r = await startReceiver();
    const mine: Sent[] = [];
    sent.push(mine);
    r.delayMs = delayMs;
    r.answer = (got, res) => {
      const pid = connectionOwner(pids, res.socket!.remotePort!, res.socket!.localPort!);
      const answer = status(mine.filter((s) => s.id === got.id));
      mine.push({ id: got.id, pid, status: answer });
      for (const check of checks) check();
      return answer;
    };
    receivers.push(r);
  }
  const until = (done: (sent: Sent[], receiver: number) => boolean) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        checks.delete(check);
        reject(new Error(`not done within ${DEADLINE_MS} ms: ${sent.map((s) => s.length).join(", ")} requests`));
      }, DEADLINE_MS);
      const check = () => {
        if (!sent.every((s, i) => done(s, i))) return;
        checks.delete(check);
        clearTimeout(timer);
        resolve();
      };
      checks.add(check);
      check();
    });
  return { receivers, sent, until, close: () => Promise.all(receivers.map((r) => r.close())) };
}

/** `count` sale events of store `store`, with IDs of `batch`. */
const saleEvents = (batch: string, store: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: `1795885200.${i}.${batch}`,
    type: "sale.begins",
    data: JSON.stringify({ sale: { store, sale_key: `${batch}-${i}` }, at: "2026-11-22T17:00:00Z" }),
  }));

/** How many of `sent` each process sent. */
const byProcess = (sent: Sent[]) => {
  const counts = new Map<number | undefined, number>();
  for (const s of sent) counts.set(s.pid, (counts.get(s.pid) ?? 0) + 1);
  return counts;
};

/**
 * Each test's limit: 50 endpoints added through the portal's forms (3 organisations signed up) and 2,000 deliveries to
 * receivers that take 25 ms took 58 s on a quiet 2-core machine; CI's machine runs other test files beside it.
 */
const PROCESS_TEST_MS = 240_000;

describe("two portal processes delivering from one PostgreSQL", () => {
  let env: Record<string, string>;
  let db: PortalDatabase;
  const running: Child[] = [];

  beforeAll(async () => {
    env = {
      DATABASE_URL: postgres.url,
      PORTAL_SECRET_KEY: randomBytes(32).toString("base64"),
      WEBHOOKS_ALLOW: "127.0.0.0/8",
      SMTP_URL: smtp.url,
      DATA_DIR: join(await tempDir("fsa-portals-"), "data"),
      BASE_URL: "http://127.0.0.1:9", // the API's (its stream is not read here: no WEBHOOKS_API_KEY)
    };
    db = await openDatabase(postgres.url);
  });
  afterAll(async () => {
    await Promise.all(running.map((c) => stopProcess(c)));
    await db?.close();
  });

  /**
   * Two portal processes, and a client signed in on each: one session (the database's, valid on every portal of it)
   * of a new organisation, `email`'s, so that each test has the endpoints it adds alone (20 an organisation at most:
   * beyond, endpoints are added by further organisations signed up on portal A).
   */
  async function startBoth(email: string) {
    const [a, b] = await Promise.all([startPortalProcess(env), startPortalProcess(env)]);
    running.push(a, b);
    const onA = new PortalClient(a.url);
    const onB = new PortalClient(b.url);
    await signUpAndVerify(onA, smtp, { email });
    for (const [name, value] of onA.cookies) onB.cookies.set(name, value);
    /** Adds an endpoint for each receiver, wanting store `store` (from portal A's form); returns their IDs. */
    const addEndpoints = async (receivers: Receiver[], store: string) => {
      const ids: string[] = [];
      let client = onA;
      for (const [i, r] of receivers.entries()) {
        if (i > 0 && i % PER_ORGANISATION === 0) {
          client = new PortalClient(a.url);
          await signUpAndVerify(client, smtp, { email: `${i / PER_ORGANISATION}.${email}` });
        }
        await client.get("/webhooks");
        const page = await client.post("/webhooks", { url: `${r.url}/hook`, "sale.begins": "on", stores: store });
        ids.push(/^\/webhooks\/([a-z0-9]{16})\?/.exec(page.url)![1]!);
      }
      return ids;
    };
    /** Sends a test event to endpoint `id` from each portal's page at once: both senders look at the queue now. */
    const wakeBoth = async (id: string) => {
      await Promise.all([onA.get(`/webhooks/${id}`), onB.get(`/webhooks/${id}`)]);
      const pages = await Promise.all([onA.post(`/webhooks/${id}/test`, {}), onB.post(`/webhooks/${id}/test`, {})]);
      for (const page of pages) expect(page.text).toContain("A test event is on its way.");
    };
    /** Stops both; each first waits for its attempts in flight and writes their outcome. */
    const stop = () => Promise.all([stopProcess(a), stopProcess(b)]);
    return { a, b, addEndpoints, wakeBoth, stop, name: (pid: number | undefined) => (pid === a.pid ? "A" : "B") };
  }

  /** The deliveries of endpoints `ids`: how many in each state, and their attempts in all. */
  const deliveries = (ids: string[]) =>
    db.all(
      `SELECT state, COUNT(*) AS n, SUM(attempts) AS attempts FROM webhook_deliveries
       WHERE endpoint_id IN (${ids.map(() => "?").join(", ")}) GROUP BY state`,
      ids,
    );

  it(
    "sends each delivery once, within each endpoint's limit, both processes sending",
    async () => {
      const EVENTS = 40;
      const both = await startBoth("processes@example.test");
      // More endpoints than one process can hold claims on (ENDPOINTS x PER_ENDPOINT > its 32 senders in flight and a
      // claim of 128 ahead), so the other process must claim some: with 20 endpoints one could hold them all.
      const set = await startReceivers(ENDPOINTS, [both.a.pid, both.b.pid], 25, () => 204);
      try {
        const ids = await both.addEndpoints(set.receivers, "women");
        const events = saleEvents("AAAAAAAAAAAAAAAA", "women", EVENTS);
        expect(await recordEvents(db, "events", events, Date.now())).toBe(EVENTS * ENDPOINTS);
        await both.wakeBoth(ids[0]!);
        // Each receiver: the sale events, and the first endpoint the two test events.
        const expected = (i: number) => EVENTS + (i === 0 ? 2 : 0);
        await set.until((sent, i) => sent.length >= expected(i));
        await both.stop(); // nothing more can come
        for (const [i, r] of set.receivers.entries()) {
          const got = set.sent[i]!.map((s) => s.id);
          expect(got).toHaveLength(expected(i));
          expect(new Set(got).size).toBe(expected(i));
          expect(r.maxInFlight).toBeLessThanOrEqual(PER_ENDPOINT);
          expect(r.maxInFlight).toBeGreaterThan(1);
        }
        const all = set.sent.flat();
        const counts = byProcess(all);
        console.log(
          `two processes, ${all.length} deliveries: ${[...counts].map(([p, n]) => `${both.name(p)} ${n}`).join(", ")}`,
        );
        expect(counts.get(undefined)).toBeUndefined(); // every request's process known
        expect(counts.get(both.a.pid)).toBeGreaterThan(0);
        expect(counts.get(both.b.pid)).toBeGreaterThan(0);
        expect(await deliveries(ids)).toEqual([{ state: "delivered", n: all.length, attempts: all.length }]);
      } finally {
        await both.stop();
        await set.close();
      }
    },
    PROCESS_TEST_MS,
  );

  it(
    "retries each failed attempt once, at the schedule's first wait, claimed by either process",
    async () => {
      const EVENTS = 10;
      const both = await startBoth("retries@example.test");
      // Each first attempt answered 500, the next 204; retries fall due together, more than one process holds claims on.
      const set = await startReceivers(ENDPOINTS, [both.a.pid, both.b.pid], 25, (earlier) =>
        earlier.length ? 204 : 500,
      );
      try {
        const ids = await both.addEndpoints(set.receivers, "home");
        expect(await recordEvents(db, "events", saleEvents("BBBBBBBBBBBBBBBB", "home", EVENTS), Date.now())).toBe(
          EVENTS * ENDPOINTS,
        );
        await both.wakeBoth(ids[0]!);
        const expected = (i: number) => EVENTS + (i === 0 ? 2 : 0);
        await set.until((sent, i) => sent.length >= 2 * expected(i));
        await both.stop();
        const retries: Sent[] = [];
        let moved = 0;
        for (const [i, r] of set.receivers.entries()) {
          const sent = set.sent[i]!;
          expect(sent).toHaveLength(2 * expected(i));
          const byId = new Map<string, Sent[]>();
          for (const s of sent) byId.set(s.id, [...(byId.get(s.id) ?? []), s]);
          expect(byId.size).toBe(expected(i));
          for (const [, [first, retry, ...more]] of byId) {
            expect([first?.status, retry?.status, more.length]).toEqual([500, 204, 0]);
            retries.push(retry!);
            if (first!.pid !== retry!.pid) moved++;
          }
          expect(r.maxInFlight).toBeLessThanOrEqual(PER_ENDPOINT);
        }
        const counts = byProcess(retries);
        console.log(
          `two processes, ${retries.length} retries: ${[...counts].map(([p, n]) => `${both.name(p)} ${n}`).join(", ")}; ${moved} by the other process than the first attempt`,
        );
        expect(counts.get(undefined)).toBeUndefined();
        expect(counts.get(both.a.pid)).toBeGreaterThan(0);
        expect(counts.get(both.b.pid)).toBeGreaterThan(0);
        expect(moved).toBeGreaterThan(0);
        const n = retries.length;
        expect(await deliveries(ids)).toEqual([{ state: "delivered", n, attempts: 2 * n }]);
      } finally {
        await both.stop();
        await set.close();
      }
    },
    PROCESS_TEST_MS,
  );
});
