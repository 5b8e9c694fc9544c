// The mail limits under requests sent at once, over real HTTP with a real SMTP server, on SQLite and PostgreSQL (the
// counts live in the database): 30 sign-ups for an existing address, 30 resets, 30 new-email requests of one account,
// 30 "send the link again" for one address, 30 invitations from one owner, each sent together, deliver at most the
// limit's 5 mails; the rest are 429.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MAIL_LIMITS } from "../../src/portal/mail-limits.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const HOUR = 3600_000;
const AT_ONCE = 30;
const LIMIT = DEFAULT_MAIL_LIMITS.recipient.failures;
/** Each case hashes passwords (scrypt, about 0.3 s each) on a machine that may be busy. */
const CASE_MS = 60_000;

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

describe.each(bothDatabases(() => postgres))("mail limits, requests sent at once, on $name", ({ name, url }) => {
  let portal: TestPortal;
  const mailsTo = (to: string, subject: RegExp) =>
    smtp.mails().filter((m) => m.to === to && subject.test(m.subject)).length;
  /** `AT_ONCE` clients, each with the form's page (and its token) first; then every form sent together. */
  const atOnce = async (
    path: string,
    page: string,
    fields: (i: number) => Record<string, string>,
    as?: PortalClient,
  ) => {
    const clients = Array.from({ length: AT_ONCE }, () => as ?? new PortalClient(portal.url));
    const tokens = await Promise.all(clients.map(async (c) => (await c.get(page), c.csrf)));
    const pages = await Promise.all(clients.map((c, i) => c.post(path, fields(i), { csrf: tokens[i] })));
    return pages.map((p: Page) => p.status).sort();
  };
  const expected = [...Array<number>(LIMIT).fill(200), ...Array<number>(AT_ONCE - LIMIT).fill(429)];

  beforeAll(async () => {
    portal = await startTestPortal(smtp, { databaseUrl: await url() });
  });
  afterAll(async () => {
    await portal?.close();
  });

  it(
    "30 sign-ups at once for an existing address send its owner 5 mails, and answer the rest 429",
    async () => {
      const email = `owner-${name}@example.test`.toLowerCase();
      await signUpAndVerify(new PortalClient(portal.url), smtp, { email });
      portal.clock.now += 2 * HOUR; // the sign-up's own mail is out of the window
      const statuses = await atOnce("/sign-up", "/sign-up", () => ({
        email,
        password: "a long password",
        partner: "P",
      }));
      expect(statuses).toEqual(expected);
      expect(mailsTo(email, /Someone tried to sign up/)).toBe(LIMIT);
    },
    CASE_MS,
  );

  it(
    "30 resets at once for one address send it 5 links",
    async () => {
      portal.clock.now += 2 * HOUR;
      const email = `reset-${name}@example.test`.toLowerCase();
      await signUpAndVerify(new PortalClient(portal.url), smtp, { email });
      portal.clock.now += 2 * HOUR;
      expect(await atOnce("/reset", "/reset", () => ({ email }))).toEqual(expected);
      expect(mailsTo(email, /Reset your/)).toBe(LIMIT);
    },
    CASE_MS,
  );

  it(
    "30 new-email requests at once from one account send 5 links, whatever the new addresses",
    async () => {
      portal.clock.now += 2 * HOUR;
      const owner = new PortalClient(portal.url);
      await signUpAndVerify(owner, smtp, { email: `mover-${name}@example.test`.toLowerCase() }); // signed in
      const to = (i: number) => `moved-${name}-${i}@example.test`.toLowerCase();
      const statuses = await atOnce(
        "/account/email",
        "/account",
        (i) => ({ email: to(i), current: "correct horse battery" }),
        owner,
      );
      expect(statuses).toEqual(expected);
      const links = Array.from({ length: AT_ONCE }, (_, i) => mailsTo(to(i), /Confirm your new email/));
      expect(links.reduce((a, b) => a + b)).toBe(LIMIT);
    },
    CASE_MS,
  );

  it(
    "30 'send the link again' at once for one unconfirmed address send it 5 links",
    async () => {
      portal.clock.now += 2 * HOUR;
      const email = `resend-${name}@example.test`.toLowerCase();
      const first = new PortalClient(portal.url);
      await first.get("/sign-up");
      await first.post("/sign-up", { email, password: "a long password", partner: "P" });
      portal.clock.now += 2 * HOUR; // the sign-up's own link is out of the window
      const before = mailsTo(email, /Confirm your email/);
      expect(await atOnce("/sign-up/resend", "/sign-up", () => ({ email }))).toEqual(expected);
      expect(mailsTo(email, /Confirm your email/) - before).toBe(LIMIT);
    },
    CASE_MS,
  );

  it(
    "30 invitations at once from one owner send 5, whatever the addresses",
    async () => {
      portal.clock.now += 2 * HOUR;
      const owner = new PortalClient(portal.url);
      await signUpAndVerify(owner, smtp, { email: `inviter-${name}@example.test`.toLowerCase() }); // signed in
      const to = (i: number) => `invited-${name}-${i}@example.test`.toLowerCase();
      const statuses = await atOnce("/team/invite", "/team", (i) => ({ email: to(i), role: "viewer" }), owner);
      expect(statuses).toEqual(expected);
      const sent = Array.from({ length: AT_ONCE }, (_, i) => smtp.mails().filter((m) => m.to === to(i)).length);
      expect(sent.reduce((a, b) => a + b)).toBe(LIMIT);
    },
    CASE_MS,
  );
});
