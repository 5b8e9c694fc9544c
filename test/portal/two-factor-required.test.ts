// Issue 36's organisation settings, two-factor required of every member, and the mails of member events, over real
// HTTP on SQLite and PostgreSQL (codes computed here with otpauth at the portal's injected clock): the settings are an
// owner's only (403 to a developer and a viewer, changing nothing); an owner without two-factor cannot require it;
// with it required, a developer without two-factor is sent to set it up from every page (302 for a GET, 303 for a
// POST, whose key is not made) until they do; the requirement follows the organisation the session acts for; and an
// invitation, a member joining, a role change, a removal, a rename and the requirement each mail exactly the owners,
// the member who acted and the member concerned, once (a removal or a setting sent twice at once: one mail each).
import { randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { linkIn } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const password = "correct horse battery";
const REQUIRED = /requires two-factor sign-in of every member/;

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

/** The member ID of `email` on an owner's team page, from its Remove button. */
const memberId = (text: string, email: string) =>
  new RegExp(`action="/team/members/([a-z0-9]+)/remove"(?:(?!action=)[\\s\\S])*?aria-label="Remove ${email}"`).exec(
    text,
  )?.[1];

describe.each(bothDatabases(() => postgres))("organisation settings and required two-factor, on $name", (db) => {
  let portal: TestPortal;
  let n = 0;
  const address = (who: string) => `${who}-${n++}-${db.name.toLowerCase()}@example.test`;

  beforeAll(async () => {
    // Every client is 127.0.0.1: the mail limits of one address would stop the file's sign-ups and invitations.
    const many = { failures: 1000, windowMs: 3600_000, lockMs: 3600_000 };
    portal = await startTestPortal(smtp, {
      databaseUrl: await db.url(),
      secretKey: randomBytes(32),
      mailLimits: { recipient: many, address: many },
      throttle: { account: many, address: many },
    });
  });
  afterAll(async () => {
    await portal?.close();
  });

  /** A new partner account, signed in: the owner of its own organisation (named after its address). */
  const owner = async (email = address("owner")) => {
    const client = new PortalClient(portal.url);
    await signUpAndVerify(client, smtp, { email, partner: `Org of ${email}` });
    return client;
  };
  /** `by` invites `email` as `role`, and `email` (no account) joins from the link; the new member's client. */
  const join = async (by: PortalClient, email: string, role: string) => {
    await by.get("/team");
    expect((await by.post("/team/invite", { email, role })).text).toContain("The invitation is sent.");
    const link = new URL(linkIn(await smtp.waitForMail(email, /You are invited/)));
    const client = new PortalClient(portal.url);
    await client.get(link.pathname + link.search);
    const joined = await client.post("/invitations/sign-up", { token: link.searchParams.get("token")!, password });
    expect(joined.status).toBe(200);
    return client;
  };
  /** Sets up TOTP for the signed-in `client`; lands on the recovery codes. */
  const setUpTotp = async (client: PortalClient) => {
    await client.get("/account/two-factor");
    const setup = await client.post("/account/two-factor/setup", { current: password });
    expect(setup.url).toBe("/account/two-factor/setup");
    const secret = /<code class="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replace(/ /g, "");
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: portal.clock.now });
    const done = await client.post("/account/two-factor/confirm", { code });
    expect(done.text).toContain("Two-factor sign-in is on.");
  };
  /** The requirement as stored. */
  const stored = async (orgName: string) =>
    Number(
      (await portal.db.all("SELECT require_two_factor FROM organisations WHERE name = ?", [orgName]))[0]?.[
        "require_two_factor"
      ],
    );
  /** The addresses mailed with a subject that matches, sorted (one entry per mail). */
  const mailed = (subject: RegExp) =>
    smtp
      .mails()
      .filter((m) => subject.test(m.subject))
      .map((m) => m.to)
      .sort();
  /** A GET or POST to `path` by `client`, redirects not followed: the status and Location. */
  const raw = async (client: PortalClient, path: string, method = "GET") => {
    const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const body = method === "POST" ? new URLSearchParams({ _csrf: client.csrf, name: "raw" }) : undefined;
    const headers: Record<string, string> = { cookie, origin: new URL(portal.url).origin };
    if (body) headers["content-type"] = "application/x-www-form-urlencoded";
    const res = await fetch(new URL(path, portal.url), { method, headers, body, redirect: "manual" });
    return { status: res.status, location: res.headers.get("location") };
  };

  it("answers 403 to a developer's and a viewer's settings, and changes nothing", async () => {
    const ownerEmail = address("owner");
    const own = await owner(ownerEmail);
    const dev = await join(own, address("dev"), "developer");
    const viewer = await join(own, address("viewer"), "viewer");
    for (const member of [dev, viewer]) {
      expect((await member.get("/team/settings")).status).toBe(403);
      await member.get("/team");
      expect((await member.post("/team/settings/name", { name: "Taken over" })).status).toBe(403);
      expect((await member.post("/team/settings/two-factor", { require: "on" })).status).toBe(403);
      expect((await member.get("/team")).text).not.toContain('href="/team/settings"');
    }
    expect(await portal.db.all("SELECT id FROM organisations WHERE name = 'Taken over'")).toEqual([]);
    const page = await own.get("/team/settings");
    expect(page.status).toBe(200);
    expect(page.text).toContain(`value="Org of ${ownerEmail}"`);
  });

  it("refuses an owner without two-factor, then sends a developer without it to set it up from every page", async () => {
    const ownerEmail = address("owner");
    const own = await owner(ownerEmail);
    const devEmail = address("dev");
    const dev = await join(own, devEmail, "developer");
    const org = `Org of ${ownerEmail}`;

    await own.get("/team/settings");
    const refused = await own.post("/team/settings/two-factor", { require: "on" });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain("You cannot require two-factor sign-in of every member before you use it yourself");
    expect(await stored(org)).toBe(0);
    expect(mailed(/requires two-factor/)).not.toContain(ownerEmail);
    expect((await dev.get("/keys")).url).toBe("/keys");

    await setUpTotp(own);
    await own.get("/team/settings");
    const on = await own.post("/team/settings/two-factor", { require: "on" });
    expect(on.text).toContain("Two-factor sign-in is now required of every member.");
    expect(await stored(org)).toBe(1);
    // The owner has it: their pages open.
    expect((await own.get("/keys")).url).toBe("/keys");

    // The developer: every page and form leads to the setup page, which says why.
    for (const path of ["/", "/keys", "/usage", "/team", "/console", "/account", "/account/email"]) {
      const page = await dev.get(path);
      expect(page.url, path).toBe("/account/two-factor");
      expect(page.text, path).toMatch(REQUIRED);
    }
    expect(await raw(dev, "/keys")).toEqual({ status: 302, location: "/account/two-factor" });
    const keys = async () => Number((await portal.db.all("SELECT COUNT(*) AS n FROM api_keys"))[0]!.n);
    const before = await keys();
    expect(await raw(dev, "/keys", "POST")).toEqual({ status: 303, location: "/account/two-factor" });
    expect((await dev.post("/keys", { name: "sneaky" })).url).toBe("/account/two-factor");
    expect(await keys()).toBe(before);
    // The static files still load; signing out works.
    expect((await dev.get("/static/portal.css")).status).toBe(200);

    // Set up, the developer reaches the pages.
    await setUpTotp(dev);
    const page = await dev.get("/keys");
    expect(page.url).toBe("/keys");
    expect(page.text).not.toMatch(REQUIRED);
    expect((await dev.post("/keys", { name: "made after" })).text).toContain("Your key is ready.");
    expect(await keys()).toBe(before + 1);
    await dev.get("/usage");
    expect((await dev.post("/sign-out", {})).url).toMatch(/^\/sign-in/);
  });

  it("follows the organisation the session acts for", async () => {
    const ownerEmail = address("owner");
    const own = await owner(ownerEmail);
    // A person with an organisation of their own, invited to this one as a developer.
    const personEmail = address("person");
    const person = new PortalClient(portal.url);
    await signUpAndVerify(person, smtp, { email: personEmail, partner: `Own of ${personEmail}` });
    await own.get("/team");
    await own.post("/team/invite", { email: personEmail, role: "developer" });
    const link = new URL(linkIn(await smtp.waitForMail(personEmail, /You are invited/)));
    await person.get(link.pathname + link.search);
    expect((await person.post("/invitations/accept", { token: link.searchParams.get("token")! })).url).toBe("/keys");

    await setUpTotp(own);
    await own.get("/team/settings");
    await own.post("/team/settings/two-factor", { require: "on" });
    // Acting for the organisation that requires it: sent to set it up. Acting for their own: not.
    expect((await person.get("/keys")).url).toBe("/account/two-factor");
    const [ownOrg] = await portal.db.all("SELECT id FROM organisations WHERE name = ?", [`Own of ${personEmail}`]);
    await person.get("/account/two-factor"); // a page with a form: its CSRF token
    expect((await person.post("/team/switch", { org: String(ownOrg!.id) })).url).toBe("/keys");
    expect((await person.get("/team")).url).toBe("/team");
  });

  it("mails each member event and setting to exactly the owners, the actor and the member concerned, once", async () => {
    const [o1, o2, devEmail, viewerEmail] = [address("o1"), address("o2"), address("dev"), address("viewer")];
    const owner1 = await owner(o1);
    const org = `Org of ${o1}`;
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const about = (what: string) => mailed(new RegExp(esc(what)));

    // Invited, by the only owner: to them (the invited address gets the link, not this mail).
    const owner2 = await join(owner1, o2, "owner");
    expect(about(`A member was invited to ${org}`)).toEqual([o1]);
    expect(about(`${o2} joined ${org}`)).toEqual([o1, o2].sort());
    await join(owner1, devEmail, "developer");
    expect(about(`A member was invited to ${org}`)).toEqual([o1, o1, o2].sort()); // the second invitation: o1, o2
    expect(about(`${devEmail} joined ${org}`)).toEqual([o1, o2, devEmail].sort());
    await join(owner2, viewerEmail, "viewer");
    expect(about(`${viewerEmail} joined ${org}`)).toEqual([o1, o2, viewerEmail].sort());
    expect((await smtp.waitForMail(o1, new RegExp(esc(`${viewerEmail} joined`)))).body).toContain(`By: ${viewerEmail}`);

    // A role change and a removal, by the second owner: the owners and that member; not the developer.
    const team = (await owner2.get("/team")).text;
    const viewerId = memberId(team, esc(viewerEmail))!;
    const roleMails = () => about(`A member's role in ${org} was changed`);
    expect((await owner2.post(`/team/members/${viewerId}/role`, { role: "developer" })).url).toBe("/team?done=role");
    expect(roleMails()).toEqual([o1, o2, viewerEmail].sort());
    // The same role again: nothing changes, nothing is mailed.
    await owner2.get("/team");
    await owner2.post(`/team/members/${viewerId}/role`, { role: "developer" });
    expect(roleMails()).toHaveLength(3);
    const body = (await smtp.waitForMail(viewerEmail, /role in/)).body;
    expect(body).toContain(`The role of ${viewerEmail} in ${org} was changed from viewer to developer.`);
    expect(body).toContain(`By: ${o2}`);
    await owner2.get("/team");
    // Sent twice at once: one removes and mails; the other finds no such member (404).
    const removals = await Promise.all([1, 2].map(() => owner2.post(`/team/members/${viewerId}/remove`, {})));
    expect(removals.map((r) => r.status).sort()).toEqual([200, 404]);
    expect(about(`${viewerEmail} was removed from ${org}`)).toEqual([o1, o2, viewerEmail].sort());

    // The settings, by the first owner: the owners.
    await setUpTotp(owner1);
    await owner1.get("/team/settings");
    // Sent twice at once: one changes it and mails; the other finds it so already.
    await Promise.all([1, 2].map(() => owner1.post("/team/settings/two-factor", { require: "on" })));
    expect(about(`${org} now requires two-factor sign-in`)).toEqual([o1, o2].sort());
    await owner1.post("/team/settings/two-factor", {});
    expect(about(`${org} no longer requires two-factor sign-in`)).toEqual([o1, o2].sort());
    const renamed = await owner1.post("/team/settings/name", { name: `${org} Ltd` });
    expect(renamed.text).toContain("The name is changed.");
    expect(renamed.text).toContain(`value="${org} Ltd"`);
    expect(about(`${org} is now named ${org} Ltd`)).toEqual([o1, o2].sort());
    // Each on the trail, naming who did it.
    const trail = (await owner1.get("/team")).text;
    expect(trail).toMatch(new RegExp(`org\\.<wbr />renamed[\\s\\S]*?<td class="who">${esc(o1.split("@")[0]!)}@`));
    expect(trail).toMatch(
      new RegExp(`org\\.<wbr />two_factor_required[\\s\\S]*?<td class="who">${esc(o1.split("@")[0]!)}@`),
    );
  });
});
