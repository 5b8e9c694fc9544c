// Security mail over real HTTP on SQLite and PostgreSQL, to a real SMTP server: a key made, rotated and revoked, a
// password changed or reset, an email changed (the old address and the new one), an account approved or suspended by
// an operator each mail the account once, saying what, when, from where and what to do, and never a key; the same
// request sent twice at once mails once; a change refused mails nothing; a rotated key's old key ending within 24 hours
// is mailed once, and not again after the portal restarts (an injected clock).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { linkIn } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

/** The key a page shows, if it shows one. */
const shownKey = (page: Page) =>
  /id="new-key" class="secret" type="text" readonly value="([A-Za-z0-9]{32})"/.exec(page.text)?.[1];
/** The dashboard ID of the key labelled `label` on the keys page. */
const keyId = (page: Page, label: string) =>
  new RegExp(`<h3>${label}</h3>[\\s\\S]*?href="/keys/([a-z0-9]+)/usage"`).exec(page.text)?.[1];
const PASSWORD = "correct horse battery";
const HOUR = 3600_000;
/** A mail's "When:" line for a time. */
const whenLine = (at: number) => `When: ${new Date(at).toISOString().slice(0, 16).replace("T", " ")} UTC`;

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

/** The mails received to `to` whose subject matches. */
const mailsTo = (to: string, subject: RegExp) => smtp.mails().filter((m) => m.to === to && subject.test(m.subject));

describe.each(bothDatabases(() => postgres))("security mail, on $name", ({ name, url }) => {
  let portal: TestPortal;
  let accounts = 0;
  const db = name.toLowerCase();
  /** A new partner's address, signed up and signed in, on the keys page. */
  const partner = async (prefix = "sec") => {
    const email = `${prefix}-${accounts++}-${db}@example.test`;
    const client = new PortalClient(portal.url);
    await signUpAndVerify(client, smtp, { email });
    await client.get("/keys");
    return { client, email };
  };

  beforeAll(async () => {
    portal = await startTestPortal(smtp, { databaseUrl: await url() });
  });
  afterAll(async () => {
    await portal?.close();
  });

  it("mails a key made, rotated and revoked once each, with its label and ends only; two revocations at once mail once", async () => {
    const { client, email } = await partner();
    const made = shownKey(await client.post("/keys", { name: "checkout" }))!;
    const [createdMail, ...more] = mailsTo(email, /new API key was made/);
    expect(more).toHaveLength(0);
    expect(createdMail!.body).toContain('"checkout"');
    expect(createdMail!.body).toContain(made.slice(0, 4));
    expect(createdMail!.body).toContain(made.slice(-4));
    expect(createdMail!.body).toContain(whenLine(portal.clock.now));
    expect(createdMail!.body).toContain("From: 127.0.0.1");
    expect(createdMail!.body).toContain(`${portal.url}/reset`);

    const id = keyId(await client.get("/keys"), "checkout")!;
    await client.get(`/keys/${id}/rotate`);
    const next = shownKey(await client.post(`/keys/${id}/rotate`, { grace: "7d" }))!;
    const rotated = mailsTo(email, /was rotated/);
    expect(rotated).toHaveLength(1);
    expect(rotated[0]!.body).toContain(next.slice(-4));
    expect(rotated[0]!.body).toContain(`works until ${whenLine(portal.clock.now + 168 * HOUR).slice(6)}`);

    await client.get(`/keys/${id}/revoke`);
    const csrf = client.csrf;
    const pages = await Promise.all([1, 2].map(() => client.post(`/keys/${id}/revoke`, {}, { csrf })));
    expect(pages.map((p) => p.status).sort()).toEqual([200, 404]);
    const revoked = mailsTo(email, /was revoked/);
    expect(revoked).toHaveLength(1);
    expect(revoked[0]!.body).toContain('"checkout"');
    for (const mail of smtp.mails().filter((m) => m.to === email)) {
      expect(mail.body).not.toContain(made);
      expect(mail.body).not.toContain(next);
    }
  });

  it("mails a password change once when it is sent twice at once, and nothing for a wrong current password", async () => {
    const { client, email } = await partner();
    await client.get("/account");
    const wrong = await client.post("/account/password", {
      current: "not the password",
      password: "a new long passphrase",
    });
    expect(wrong.status).toBe(401);
    const csrf = client.csrf;
    const form = { current: PASSWORD, password: "a new long passphrase" };
    const pages = await Promise.all([1, 2].map(() => client.post("/account/password", form, { csrf })));
    expect(pages.map((p) => p.status).sort()).toEqual([200, 409]);
    const changed = mailsTo(email, /password was changed/);
    expect(changed).toHaveLength(1);
    expect(changed[0]!.body).toContain("From: 127.0.0.1");
  });

  it("mails a password reset by link", async () => {
    const { email } = await partner();
    const stranger = new PortalClient(portal.url);
    await stranger.get("/reset");
    await stranger.post("/reset", { email });
    const link = new URL(linkIn(await smtp.waitForMail(email, /Reset your/)));
    await stranger.get(link.pathname + link.search);
    const token = link.searchParams.get("token")!;
    await stranger.post("/reset/confirm", { token, password: "another long passphrase" });
    expect(mailsTo(email, /password was reset/)).toHaveLength(1);
  });

  it("mails an email change to the old address and the new one, once, and nothing when the new address was taken", async () => {
    const { client, email } = await partner();
    const fresh = `new-${accounts++}-${db}@example.test`;
    await client.get("/account");
    await client.post("/account/email", { email: fresh, current: PASSWORD });
    const link = new URL(linkIn(await smtp.waitForMail(fresh, /Confirm your new email/)));
    await client.get(link.pathname + link.search);
    const token = link.searchParams.get("token")!;
    const csrf = client.csrf;
    await Promise.all([1, 2].map(() => client.post("/email/confirm", { token }, { csrf })));
    for (const to of [email, fresh]) {
      const mails = mailsTo(to, /has a new email address/);
      expect(mails).toHaveLength(1);
      expect(mails[0]!.body).toContain(`from ${email} to ${fresh}`);
    }

    // A link to an address another account took since: no change, no mail.
    const other = await partner();
    const taken = `taken-${accounts++}-${db}@example.test`;
    await other.client.get("/account");
    await other.client.post("/account/email", { email: taken, current: PASSWORD });
    const takenLink = new URL(linkIn(await smtp.waitForMail(taken, /Confirm your new email/)));
    await signUpAndVerify(new PortalClient(portal.url), smtp, { email: taken });
    await other.client.get(takenLink.pathname + takenLink.search);
    const refused = await other.client.post("/email/confirm", { token: takenLink.searchParams.get("token")! });
    expect(refused.status).toBe(404);
    expect(mailsTo(other.email, /has a new email address/)).toHaveLength(0);
  });

  it("mails the approval and the suspension of an account once each when the operator's form is sent twice at once", async () => {
    const manual = await startTestPortal(smtp, { databaseUrl: await url(), approval: "manual" });
    try {
      const operator = new PortalClient(manual.url);
      const opEmail = `operator-${accounts++}-${db}@example.test`;
      await signUpAndVerify(operator, smtp, { email: opEmail });
      await manual.db.run("UPDATE accounts SET role = 'admin', status = 'active' WHERE email = ?", [opEmail]);
      await operator.get("/sign-in");
      await operator.post("/sign-in", { email: opEmail, password: PASSWORD });
      const email = `approved-${accounts++}-${db}@example.test`;
      await signUpAndVerify(new PortalClient(manual.url), smtp, { email });
      const id = String((await manual.db.all("SELECT id FROM accounts WHERE email = ?", [email]))[0]!.id);

      await operator.get(`/admin/accounts/${id}`);
      let csrf = operator.csrf;
      const note = { reason: "Welcome aboard: invoices go to billing" };
      await Promise.all([1, 2].map(() => operator.post(`/admin/accounts/${id}/approve`, note, { csrf })));
      const approved = mailsTo(email, /is approved/);
      expect(approved).toHaveLength(1);
      expect(approved[0]!.body).toContain("The operator's note: Welcome aboard: invoices go to billing");

      await operator.get(`/admin/accounts/${id}`);
      csrf = operator.csrf;
      const form = { reason: "Unpaid invoices since March", confirm: "yes" };
      await Promise.all([1, 2].map(() => operator.post(`/admin/accounts/${id}/suspend`, form, { csrf })));
      const suspended = mailsTo(email, /is suspended/);
      expect(suspended).toHaveLength(1);
      expect(suspended[0]!.body).toContain("Reason: Unpaid invoices since March");
      expect(suspended[0]!.body).toContain(whenLine(manual.clock.now));
      expect(suspended[0]!.body).not.toContain("From: 127.0.0.1"); // the operator's address is not the partner's
    } finally {
      await manual.close();
    }
  });

  it("mails a rotated key's old key ending within 24 hours once, and not again after a restart", async () => {
    const databaseUrl = await url(); // the same database for the portal started again
    const first = await startTestPortal(smtp, { databaseUrl });
    const email = `grace-${accounts++}-${db}@example.test`;
    const client = new PortalClient(first.url);
    await signUpAndVerify(client, smtp, { email });
    await client.get("/keys");
    const made = shownKey(await client.post("/keys", { name: "nightly" }))!;
    const id = keyId(await client.get("/keys"), "nightly")!;
    await client.get(`/keys/${id}/rotate`);
    const rotatedAt = first.clock.now;
    const next = shownKey(await client.post(`/keys/${id}/rotate`, { grace: "7d" }))!;
    const ending = /stops working within 24 hours/;

    first.clock.now = rotatedAt + 7 * 24 * HOUR - 25 * HOUR; // 25 hours before the end: not yet
    expect(await first.mailGraceEndings()).toBe(0);
    first.clock.now = rotatedAt + 7 * 24 * HOUR - 23 * HOUR;
    expect(await first.mailGraceEndings()).toBe(1);
    expect(await first.mailGraceEndings()).toBe(0);
    await first.outbox.flush();
    await first.close();

    const again = await startTestPortal(smtp, { databaseUrl, keysFile: first.keysFile });
    try {
      again.clock.now = rotatedAt + 7 * 24 * HOUR - 2 * HOUR;
      expect(await again.mailGraceEndings()).toBe(0);
      await again.outbox.flush();
    } finally {
      await again.close();
    }
    const mails = mailsTo(email, ending);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.body).toContain('"nightly"');
    expect(mails[0]!.body).toContain(whenLine(rotatedAt + 7 * 24 * HOUR).slice(6));
    expect(mails[0]!.body).not.toContain(made);
    expect(mails[0]!.body).not.toContain(next);
  });
});
