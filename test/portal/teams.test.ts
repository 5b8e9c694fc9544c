// Issue 36's teams over real HTTP, on SQLite and PostgreSQL: an owner invites a developer (who signs up from the link)
// and a viewer (who has an account and signs in); each role is enforced on the server (a viewer's POST of a key is a
// 403 and makes nothing); keys show their maker and the trail names each member; the last owner stays, even when two
// owners remove each other at once; a removed member's session is refused at its next request; an invitation's link
// works once, for its address only, until it expires; another organisation's identifiers are 404s; and migration 9
// makes an existing account a one-member organisation with its keys, sessions and trail.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.ts";
import { MIGRATIONS, migrate } from "../../src/db/migrations.ts";
import { loadKeysFile } from "../../src/keys/keys-file.ts";
import { INVITATION_LIFETIME_MS } from "../../src/portal/store/invitations.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { TestPortal } from "./portal-client.ts";
import { linkIn } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";

const password = "correct horse battery";

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

/** The path and query of the invitation link last mailed to `email`. */
const inviteLink = async (email: string) => {
  const mails = smtp.mails().filter((m) => m.to.includes(email) && /You are invited/.test(m.subject));
  const mail = mails.at(-1) ?? (await smtp.waitForMail(email, /You are invited/));
  const link = new URL(linkIn(mail));
  return { path: link.pathname + link.search, token: link.searchParams.get("token")! };
};

/** The member ID of `email` on an owner's team page, from its role form (oneself included). */
const roleId = (text: string, email: string) =>
  new RegExp(
    `action="/team/members/([a-z0-9]+)/role"(?:(?!action=)[\\s\\S])*?aria-label="Role of ${literal(email)}"`,
  ).exec(text)?.[1];
/** The member ID of `email` on an owner's team page, from its Remove button (not oneself's: they leave instead). */
const memberId = (text: string, email: string) =>
  new RegExp(
    `action="/team/members/([a-z0-9]+)/remove"(?:(?!action=)[\\s\\S])*?aria-label="Remove ${literal(email)}"`,
  ).exec(text)?.[1];
/** `text` matched literally in a RegExp. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe.each(bothDatabases(() => postgres))("teams, on $name", ({ name, url }) => {
  let portal: TestPortal;
  let n = 0;
  const address = (who: string) => `${who}-${n++}-${name.toLowerCase()}@example.test`;
  /** A new partner account, signed in: the owner of its own organisation. */
  const owner = async (email = address("owner")) => {
    const client = new PortalClient(portal.url);
    await signUpAndVerify(client, smtp, { email, partner: `Org of ${email}` });
    return client;
  };
  const signIn = async (email: string) => {
    const client = new PortalClient(portal.url);
    await client.get("/sign-in");
    const page = await client.post("/sign-in", { email, password });
    expect(page.status).toBe(200);
    return client;
  };
  /** `by` invites `email` as `role`; returns the link. */
  const invite = async (by: PortalClient, email: string, role: string) => {
    await by.get("/team");
    const sent = await by.post("/team/invite", { email, role });
    expect(sent.text).toContain("The invitation is sent.");
    return inviteLink(email);
  };
  /** `email` (no account) accepts the link by making an account. */
  const acceptAsNew = async (path: string, token: string) => {
    const client = new PortalClient(portal.url);
    expect((await client.get(path)).text).toContain("Make my account and join");
    const joined = await client.post("/invitations/sign-up", { token, password });
    expect(joined.status).toBe(200);
    return client;
  };
  /** A team: an owner, a developer who signed up from the link, a viewer who had an account and signed in. */
  const team = async () => {
    const ownerEmail = address("owner");
    const own = await owner(ownerEmail);
    const [dev, viewer] = [address("dev"), address("viewer")];
    await signUpAndVerify(new PortalClient(portal.url), smtp, { email: viewer, partner: "Viewer's own" });
    const devLink = await invite(own, dev, "developer");
    const developer = await acceptAsNew(devLink.path, devLink.token);
    const viewLink = await invite(own, viewer, "viewer");
    const v = await signIn(viewer);
    expect((await v.get(viewLink.path)).text).toContain("Join Org of");
    const joined = await v.post("/invitations/accept", { token: viewLink.token });
    expect(joined.url).toBe("/usage"); // a viewer's start page
    return { own, developer, v, dev, viewer, ownerEmail };
  };

  beforeAll(async () => {
    // Every client here is 127.0.0.1: the mail limits of one address would stop the file's sign-ups and invitations.
    const many = { failures: 1000, windowMs: 3600_000, lockMs: 3600_000 };
    portal = await startTestPortal(smtp, { databaseUrl: await url(), mailLimits: { recipient: many, address: many } });
  });
  afterAll(async () => {
    await portal?.close();
  });

  it("invites a developer and a viewer, and enforces their roles on the server", async () => {
    const { own, developer, v, dev, viewer, ownerEmail } = await team();
    // The viewer: no key form nor link, the keys list sends them to usage, and a direct POST is refused, making nothing.
    const usage = await v.get("/keys");
    expect(usage.url).toBe("/usage");
    expect(usage.text).not.toContain('action="/keys"');
    expect(usage.text).not.toContain('href="/keys"');
    const before = (await loadKeysFile(portal.keysFile)).keys.length;
    const refused = await v.post("/keys", { name: "sneaky" });
    expect(refused.status).toBe(403);
    expect((await loadKeysFile(portal.keysFile)).keys.length).toBe(before);
    expect((await v.post("/team/invite", { email: address("x"), role: "owner" })).status).toBe(403);
    expect((await v.get("/team")).text).not.toContain('action="/team/invite"');

    // The developer makes a key for the organisation: the owner sees it, and who made it.
    await developer.get("/keys");
    const made = await developer.post("/keys", { name: "made by dev" });
    expect(made.text).toContain("Your key is ready.");
    const keys = await own.get("/keys");
    expect(keys.text).toMatch(new RegExp(`<h3>made by dev</h3>[\\s\\S]*?Made by</dt>\\s*<dd>${dev}</dd>`));
    // The owners and the member who made it are told (issue 36, item 3); the viewer is not.
    for (const to of [ownerEmail, dev])
      expect((await smtp.waitForMail(to, /new API key was made/i)).body).toContain("made by dev");
    expect(smtp.mails().some((m) => m.to === viewer && /new API key was made/i.test(m.subject))).toBe(false);
    expect((await developer.post("/team/invite", { email: address("y"), role: "viewer" })).status).toBe(403);
    const id = memberId((await own.get("/team")).text, viewer)!;
    expect((await developer.post(`/team/members/${id}/remove`, {})).status).toBe(403);

    // The organisation's trail names the member who did each thing.
    const trail = (await own.get("/team")).text;
    expect(trail).toMatch(new RegExp(`key\\.<wbr />created[\\s\\S]*?<td class="who">${dev.split("@")[0]}@`));
    expect(trail).toMatch(new RegExp(`member\\.<wbr />joined[\\s\\S]*?<td class="who">${viewer.split("@")[0]}@`));
  });

  it("keeps the last owner, also when two owners remove each other at once", async () => {
    const { own, developer, dev, ownerEmail } = await team();
    const ownPage = await own.get("/team");
    expect((await own.post("/team/leave", {})).status).toBe(409);
    await own.get("/team");
    const self = roleId(ownPage.text, ownerEmail)!;
    expect((await own.post(`/team/members/${self}/role`, { role: "viewer" })).status).toBe(409);
    expect((await own.post(`/team/members/${self}/remove`, {})).status).toBe(409);
    const devId = memberId((await own.get("/team")).text, dev)!;
    expect((await own.post(`/team/members/${devId}/role`, { role: "owner" })).status).toBe(200);
    const devPage = await developer.get("/team");
    const ownerId = memberId(devPage.text, ownerEmail)!;
    await own.get("/team");
    const [a, b] = await Promise.all([
      own.post(`/team/members/${devId}/remove`, {}),
      developer.post(`/team/members/${ownerId}/remove`, {}),
    ]);
    // One removal is made; the other's owner is no longer a member by the time it is taken, and is refused.
    expect([a.url, b.url].filter((u) => u === "/team?done=removed")).toHaveLength(1);
    const survivor = a.url === "/team?done=removed" ? own : developer;
    const loser = survivor === own ? developer : own;
    const members = (await survivor.get("/team")).text;
    expect(members.match(/<option value="owner" selected>/g)).toHaveLength(1);
    expect((await loser.get("/team")).url).toBe("/sign-in");
    expect((await survivor.post("/team/leave", {})).status).toBe(409);
  });

  it("refuses a removed member's open session at its next request", async () => {
    const { own, v, viewer } = await team();
    expect((await v.get("/usage")).status).toBe(200);
    await own.get("/team");
    const removed = await own.post(`/team/members/${memberId(own.last!.text, viewer)!}/remove`, {});
    expect(removed.text).toContain("The member is removed");
    const next = await v.get("/usage");
    expect(next.url).toBe("/sign-in");
    expect(v.cookies.size).toBeGreaterThan(0); // the cookie is still sent: the server refused it
  });

  it("refuses an invitation's link used again, by another address, or after it expired", async () => {
    const own = await owner();
    const invited = address("inv");
    const link = await invite(own, invited, "developer");
    // Another address, signed in: refused, and the link still works for its own address.
    const other = await owner();
    expect((await other.get(link.path)).status).toBe(403);
    expect((await other.post("/invitations/accept", { token: link.token })).status).toBe(403);
    const joined = await acceptAsNew(link.path, link.token);
    expect((await joined.get("/keys")).status).toBe(200);
    // Used: dead for everyone, the invited address too.
    expect((await new PortalClient(portal.url).get(link.path)).status).toBe(404);
    expect((await joined.post("/invitations/accept", { token: link.token })).status).toBe(404);
    const again = new PortalClient(portal.url);
    await again.get("/sign-in");
    expect((await again.post("/invitations/sign-up", { token: link.token, password })).status).toBe(404);
    // Expired: a week and a moment later.
    const late = await invite(await owner(), address("late"), "viewer");
    portal.clock.now += INVITATION_LIFETIME_MS + 1;
    try {
      const client = new PortalClient(portal.url);
      expect((await client.get(late.path)).status).toBe(404);
      await client.get("/sign-in");
      expect((await client.post("/invitations/sign-up", { token: late.token, password })).status).toBe(404);
    } finally {
      portal.clock.now -= INVITATION_LIFETIME_MS + 1;
    }
  });

  it("answers 404 to another organisation's identifiers", async () => {
    const { own, viewer, ownerEmail } = await team();
    await own.get("/keys");
    await own.post("/keys", { name: "a key of A" });
    const keyA = /href="\/keys\/([a-z0-9]+)\/usage"/.exec((await own.get("/keys")).text)![1]!;
    const memberA = memberId((await own.get("/team")).text, viewer)!;
    await invite(own, address("pending"), "viewer");
    const invitationA = /action="\/team\/invitations\/([a-z0-9]+)\/withdraw"/.exec((await own.get("/team")).text)![1]!;
    const orgA = roleId((await own.get("/team")).text, ownerEmail)!; // an organisation's ID is its founder's

    const b = await owner();
    await b.get("/keys");
    for (const path of [`/keys/${keyA}/rotate`, `/keys/${keyA}/revoke`, `/keys/${keyA}/usage`])
      expect((await b.get(path)).status).toBe(404);
    await b.get("/team");
    expect((await b.post(`/keys/${keyA}/revoke`, {})).status).toBe(404);
    expect((await b.post(`/keys/${keyA}/rotate`, { grace: "now" })).status).toBe(404);
    expect((await b.post(`/team/members/${memberA}/remove`, {})).status).toBe(404);
    expect((await b.post(`/team/members/${memberA}/role`, { role: "owner" })).status).toBe(404);
    expect((await b.post(`/team/invitations/${invitationA}/withdraw`, {})).status).toBe(404);
    expect((await b.post("/team/switch", { org: orgA })).status).toBe(404);
    expect((await b.get("/team")).text).toContain("You are an <strong>owner</strong> of <strong>Org of owner");
    // Nothing of A changed.
    expect((await own.get("/keys")).text).toContain("a key of A");
    expect(memberId((await own.get("/team")).text, viewer)).toBe(memberA);
  });

  it("makes an existing account a one-member organisation with its keys, sessions and trail (migration 9)", async () => {
    let dbUrl = await url();
    if (name === "PostgreSQL") {
      const admin = await openDatabase(dbUrl);
      const db = `teams_${randomBytes(4).toString("hex")}`;
      await admin.run(`CREATE DATABASE ${db}`);
      await admin.close();
      const u = new URL(dbUrl);
      u.pathname = `/${db}`;
      dbUrl = u.toString();
    }
    const db = await openDatabase(dbUrl);
    try {
      await migrate(
        db,
        1,
        MIGRATIONS.filter((m) => m.version <= 8),
      );
      await db.run(
        `INSERT INTO accounts (id, email, partner, password, verified, status, created)
         VALUES ('old1', 'old@example.test', 'Old Partner', 'h', 1, 'active', 5)`,
      );
      await db.run(
        `INSERT INTO api_keys (id, account_id, file_name, label, first4, last4, created)
         VALUES ('k1', 'old1', 'p.old1.k1', 'kept', 'abcd', 'wxyz', 6)`,
      );
      await db.run("INSERT INTO sessions (id_hash, account_id, created, seen) VALUES ('s1', 'old1', 7, 7)");
      await db.run(
        "INSERT INTO audit (id, account_id, at, event, detail, address) VALUES ('a1', 'old1', 8, 'key.created', '', '::1')",
      );
      expect(
        await migrate(
          db,
          9,
          MIGRATIONS.filter((m) => m.version <= 9),
        ),
      ).toEqual([9]);
      expect(await db.all("SELECT id, name FROM organisations")).toEqual([{ id: "old1", name: "Old Partner" }]);
      expect(await db.all("SELECT org_id, account_id, role FROM members")).toEqual([
        { org_id: "old1", account_id: "old1", role: "owner" },
      ]);
      expect(await db.all("SELECT account_id, file_name, label, created_by FROM api_keys")).toEqual([
        { account_id: "old1", file_name: "p.old1.k1", label: "kept", created_by: "old1" },
      ]);
      expect(await db.all("SELECT account_id, org_id FROM sessions")).toEqual([{ account_id: "old1", org_id: "old1" }]);
      expect(await db.all("SELECT event, actor FROM audit")).toEqual([
        { event: "key.created", actor: "old@example.test" },
      ]);
    } finally {
      await db.close();
    }
  });
});
