// The outbox over real HTTP with a real SMTP server: mail leaves the request path (a reset is answered while the SMTP
// server does not answer, for an address with an account as for one without, and the mail arrives once it answers),
// a failed mail is tried again with a doubling delay (injected clock) and dropped, logged, after its attempts; sent and
// dropped rows leave the table; and senders of two portals on one database send each queued mail once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queueMail } from "../../src/portal/store/outbox-rows.ts";
import { PortalClient, signUpAndVerify, smtpTransport, startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { bothDatabases, startPostgres } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const CASE_MS = 60_000;
const rowsIn = async (portal: TestPortal) => Number((await portal.db.all("SELECT COUNT(*) AS n FROM outbox"))[0]!.n);

describe("the outbox", () => {
  let smtp: SmtpServer;
  let portal: TestPortal;
  const log: string[] = [];
  const settings = { attempts: 3, firstRetryMs: 30_000 };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    portal = await startTestPortal(smtp, { log: (line) => log.push(line), outbox: settings });
    await signUpAndVerify(new PortalClient(portal.url), smtp, { email: "known@example.test" });
  }, CASE_MS);
  afterAll(async () => {
    await portal?.close();
    await smtp?.stop();
  });

  it(
    "answers a reset while the SMTP server does not answer, with an account or without; the mail arrives later",
    async () => {
      const client = new PortalClient(portal.url);
      smtp.pause(); // connections are accepted, and nothing is said on them
      try {
        for (const email of ["known@example.test", "nobody@example.test"]) {
          await client.get("/reset");
          // `request`, not `post`: the client does not wait for the outbox here.
          const page = await client.request("/reset", {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded", origin: portal.url },
            body: new URLSearchParams({ email, _csrf: client.csrf }),
          });
          expect(page.status).toBe(200);
          expect(page.text).toContain(`If ${email} has an account, we sent it a link.`);
        }
        expect(smtp.mails().filter((m) => /Reset/.test(m.subject))).toEqual([]);
      } finally {
        smtp.resume();
      }
      expect((await smtp.waitForMail("known@example.test", /Reset your/)).body).toContain("/reset/confirm?token=");
      await portal.outbox.flush();
      expect(smtp.mails().filter((m) => m.to === "nobody@example.test")).toEqual([]);
      expect(await rowsIn(portal)).toBe(0);
    },
    CASE_MS,
  );

  it(
    "tries a failed mail again after 30 s, then 60 s, and drops it after 3 attempts, logged",
    async () => {
      const before = smtp.mails().length; // none can come while it is stopped
      await smtp.stop(); // nothing listens: each attempt is refused
      try {
        const client = new PortalClient(portal.url);
        await client.get("/reset");
        await client.post("/reset", { email: "known@example.test" }); // the first attempt, refused
        const attempts = async () =>
          (await portal.db.all("SELECT attempts FROM outbox")).map((r) => Number(r.attempts));
        expect(await attempts()).toEqual([1]);
        expect(log.filter((l) => l.includes('"event":"mail_retry"'))).toHaveLength(1);
        portal.clock.now += 29_999;
        await portal.outbox.flush();
        expect(await attempts()).toEqual([1]); // not due yet
        portal.clock.now += 1;
        await portal.outbox.flush();
        expect(await attempts()).toEqual([2]);
        portal.clock.now += 59_999;
        await portal.outbox.flush();
        expect(await attempts()).toEqual([2]);
        portal.clock.now += 1;
        await portal.outbox.flush();
        expect(await attempts()).toEqual([]); // the third failed: dropped
        const dropped = log.filter((l) => l.includes('"event":"mail_dropped"')).map((l) => JSON.parse(l) as object);
        expect(dropped).toEqual([expect.objectContaining({ kind: "reset", attempts: 3, to: "known@example.test" })]);
        expect(log.join("\n")).not.toMatch(/token=/);

        // A mail that fails once and then goes through is sent once, when due.
        await client.get("/reset");
        await client.post("/reset", { email: "known@example.test" });
        expect(await attempts()).toEqual([1]);
      } finally {
        await smtp.restart();
      }
      portal.clock.now += 30_000;
      await portal.outbox.flush();
      expect(await rowsIn(portal)).toBe(0);
      expect(smtp.mails().slice(before)).toEqual([expect.objectContaining({ to: "known@example.test" })]);
    },
    CASE_MS,
  );
});

let postgres: PostgresServer;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

describe.each(bothDatabases(() => postgres))("two portals' senders on one $name database", ({ name, url }) => {
  it(
    "send each of 60 queued mails once, both looking at once",
    async () => {
      const smtp = await startSmtpServer();
      const databaseUrl = await url();
      const a = await startTestPortal(smtp, { databaseUrl });
      const b = await startTestPortal(smtp, { databaseUrl, mailer: smtpTransport(smtp) });
      try {
        const to = (i: number) => `many-${name}-${i}@example.test`.toLowerCase();
        for (let i = 0; i < 60; i++)
          await queueMail(a.db, { to: to(i), subject: `Mail ${i}`, text: "Hello.\n" }, a.clock.now); // no sender woken
        await Promise.all([a.outbox.flush(), b.outbox.flush(), a.outbox.flush(), b.outbox.flush()]);
        const received = smtp.mails().map((m) => m.to);
        expect(received.sort()).toEqual(Array.from({ length: 60 }, (_, i) => to(i)).sort());
        expect(await rowsIn(a)).toBe(0);
      } finally {
        await a.close();
        await b.close();
        await smtp.stop();
      }
    },
    CASE_MS,
  );
});
