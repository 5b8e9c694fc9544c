// Issue 38's webhooks kept safe, over real HTTP: a URL on a private, loopback, link-local (metadata) or unspecified
// address is refused when added, and at connect time too (a name that resolved to a public address when it was added
// and to 127.0.0.1 when sent: DNS rebinding); plain http only to WEBHOOKS_ALLOW's addresses; a redirect is not
// followed; a viewer sees the pages and every POST is a 403; an endpoint failing for 5 days is disabled and its owners
// mailed once; https receivers' certificates are checked. Deliveries here are test events (the portal reads no stream: no API key).
import { execFileSync } from "node:child_process";
import type { lookup } from "node:dns";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpsServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { StartPortalOptions } from "../../src/portal/server.ts";
import { findAccountByEmail } from "../../src/portal/store/accounts.ts";
import { listAudit } from "../../src/portal/store/audit.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import { linkIn, startSmtpServer } from "./smtp-server.ts";
import type { SmtpServer } from "./smtp-server.ts";
import { heldTimers, startReceiver } from "./webhook-receiver.ts";

const LOOPBACK = ["127.0.0.0/8", "::1/128"];
let smtp: SmtpServer;
const opened: { close(): unknown }[] = [];
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(() => smtp.stop());
afterEach(async () => {
  for (const c of opened.splice(0).reverse()) await c.close();
});

async function portalWith(webhookSettings: StartPortalOptions["webhookSettings"]): Promise<TestPortal> {
  const portal = await startTestPortal(smtp, {
    secretKey: randomBytes(32),
    webhookSettings: { ...webhookSettings, scheduler: heldTimers().scheduler },
    sessionLimits: { idleMs: 30 * 86_400_000, absoluteMs: 30 * 86_400_000 },
  });
  opened.push(portal);
  return portal;
}

let n = 0;
async function owner(portal: TestPortal, email = `owner-${n++}@example.test`) {
  const client = new PortalClient(portal.url);
  await signUpAndVerify(client, smtp, { email });
  await client.get("/webhooks");
  return client;
}

const adding = (client: PortalClient, url: string) => client.post("/webhooks", { url, "sale.begins": "on" });
/** The ID of the endpoint whose page an addition redirected to. */
const endpointId = (page: Page) => /^\/webhooks\/([a-z0-9]{16})\?/.exec(page.url)![1]!;

describe("webhooks' address checks", () => {
  it("refuses private, loopback, link-local and unspecified addresses when an endpoint is added", async () => {
    const strict = await owner(await portalWith({ allow: [] }));
    const refused = [
      "https://10.0.0.1/hook",
      "https://192.168.1.20/hook",
      "https://172.16.0.1/hook",
      "https://100.64.0.1/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://0.0.0.0/hook",
      "https://[::1]/hook",
      "https://[fd00::1]/hook",
      "https://[fe80::1]/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://127.0.0.1/hook",
      "https://localhost/hook", // a name: resolved, and its 127.0.0.1 refused
      "http://127.0.0.1:8080/hook", // loopback without WEBHOOKS_ALLOW
      "http://93.184.216.34/hook", // plain http to an address WEBHOOKS_ALLOW does not name
      "ftp://93.184.216.34/hook",
      "https://user:pw@93.184.216.34/hook",
    ];
    for (const url of refused) {
      const page = await adding(strict, url);
      expect(page.status, url).toBe(400);
      expect(page.text, url).toMatch(/Refused|must start with https|user name/);
    }
    expect((await adding(strict, "https://93.184.216.34/hook")).status).toBe(200);
    // WEBHOOKS_ALLOW=loopback: plain http to 127.0.0.1 is allowed; 10.0.0.1 still is not.
    const allowing = await owner(await portalWith({ allow: LOOPBACK }));
    expect((await adding(allowing, "http://127.0.0.1:9/hook")).status).toBe(200);
    await allowing.get("/webhooks");
    expect((await adding(allowing, "http://10.0.0.1/hook")).status).toBe(400);
  });

  it("checks the address where it connects: a name rebound to 127.0.0.1 is refused, and a redirect is not followed", async () => {
    const receiver = await startReceiver();
    const target = await startReceiver();
    opened.push(receiver, target);
    let rebound = false;
    // A resolver that answers a public address when the endpoint is added, then 127.0.0.1 (DNS rebinding).
    const resolve = ((
      _host: string,
      _options: unknown,
      callback: (err: null, a: { address: string; family: number }[]) => void,
    ) => callback(null, [{ address: rebound ? "127.0.0.1" : "93.184.216.34", family: 4 }])) as unknown as typeof lookup;
    const strict = await portalWith({ allow: [], resolve });
    const client = await owner(strict);
    const port = new URL(receiver.url).port;
    const added = await adding(client, `https://rebind.example.test:${port}/hook`);
    expect(added.status).toBe(200);
    const id = endpointId(added);
    rebound = true;
    await client.get(`/webhooks/${id}`);
    await client.post(`/webhooks/${id}/test`, {});
    await strict.webhooks!.deliverer.flush();
    expect(receiver.received).toHaveLength(0);
    expect((await client.get(`/webhooks/${id}`)).text).toContain("refused: 127.0.0.1 is not a public address");

    // A redirect to another address (here another loopback receiver, which would count a request) is not followed.
    const allowing = await portalWith({ allow: LOOPBACK });
    const other = await owner(allowing);
    receiver.answer = (_r, res) => {
      res.writeHead(307, { location: `${target.url}/stolen` }).end();
      return 307;
    };
    const redirected = endpointId(await adding(other, `${receiver.url}/hook`));
    await other.get(`/webhooks/${redirected}`);
    await other.post(`/webhooks/${redirected}/test`, {});
    await allowing.webhooks!.deliverer.flush();
    expect(receiver.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
    const log = (await other.get(`/webhooks/${redirected}`)).text;
    expect(log).toContain("<td>307</td>");
    expect(log).toMatch(/pending, next attempt/);
  });
});

describe("webhooks' roles and failing endpoints", () => {
  it("lets a viewer see the endpoints and their log, and answers each of a viewer's POSTs 403", async () => {
    const portal = await portalWith({ allow: LOOPBACK });
    const own = await owner(portal);
    const id = endpointId(await adding(own, "http://127.0.0.1:9/hook"));
    const viewerEmail = `viewer-${n++}@example.test`;
    await own.get("/team");
    await own.post("/team/invite", { email: viewerEmail, role: "viewer" });
    const link = new URL(linkIn(await smtp.waitForMail(viewerEmail, /You are invited/)));
    const viewer = new PortalClient(portal.url);
    await viewer.get(link.pathname + link.search);
    const joined = await viewer.post("/invitations/sign-up", {
      token: link.searchParams.get("token")!,
      password: "correct horse battery",
    });
    expect(joined.status).toBe(200);
    const list = await viewer.get("/webhooks");
    expect(list.status).toBe(200);
    expect(list.text).toContain("http://127.0.0.1:9/hook");
    expect(list.text).not.toContain('action="/webhooks"');
    const page = await viewer.get(`/webhooks/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("Rotate the secret");
    for (const path of [
      "/webhooks",
      ...["test", "rotate", "disable", "delete", "replay"].map((a) => `/webhooks/${id}/${a}`),
    ])
      expect((await viewer.post(path, { url: "http://127.0.0.1:9/x", grace: "now" })).status, path).toBe(403);
    expect((await own.get(`/webhooks/${id}`)).text).toContain("enabled");
    expect((await own.get("/webhooks")).text.match(/Settings and log/g)).toHaveLength(1);
  });

  it("puts each change of an endpoint on the organisation's trail, naming the member who made it", async () => {
    const portal = await portalWith({ allow: LOOPBACK });
    const email = `trail-${n++}@example.test`;
    const own = await owner(portal, email);
    const id = endpointId(await adding(own, "http://127.0.0.1:9/trail"));
    await own.get(`/webhooks/${id}`);
    await own.post(`/webhooks/${id}/rotate`, { grace: "now" });
    await own.get(`/webhooks/${id}`);
    for (const action of ["disable", "enable", "delete"]) await own.post(`/webhooks/${id}/${action}`, {});
    const trail = (await listAudit(portal.db, (await findAccountByEmail(portal.db, email))!.id)).reverse();
    const events = trail.filter((e) => e.event.startsWith("webhook."));
    expect(events.map((e) => e.event)).toEqual([
      "webhook.added",
      "webhook.rotated",
      "webhook.disabled",
      "webhook.enabled",
      "webhook.deleted",
    ]);
    expect(events.every((e) => e.actor === email && e.detail.startsWith("http://127.0.0.1:9/trail"))).toBe(true);
  });

  it("disables an endpoint that failed for 5 days and mails its owners once", async () => {
    const receiver = await startReceiver();
    opened.push(receiver);
    receiver.answer = () => 500;
    const portal = await portalWith({ allow: LOOPBACK });
    const email = `failing-${n++}@example.test`;
    const own = await owner(portal, email);
    const id = endpointId(await adding(own, `${receiver.url}/hook`));
    for (let day = 0; day <= 5; day++) {
      await own.get(`/webhooks/${id}`);
      await own.post(`/webhooks/${id}/test`, {});
      await portal.webhooks!.deliverer.flush();
      expect((await own.get(`/webhooks/${id}`)).text).toContain(
        day < 5 ? "enabled" : "disabled: every attempt failed for 5 days",
      );
      portal.clock.now += 86_400_000;
    }
    await portal.outbox.flush();
    const mails = smtp.mails().filter((m) => m.to.includes(email) && /webhook endpoint was disabled/.test(m.subject));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.body).toContain(`${receiver.url}/hook`);
    // Disabled: nothing is sent, though deliveries fall due; enabled again by a member, they are.
    const before = receiver.received.length;
    portal.clock.now += 86_400_000;
    await portal.webhooks!.deliverer.flush();
    expect(receiver.received.length).toBe(before);
    receiver.answer = () => 204;
    await own.post(`/webhooks/${id}/enable`, {});
    await portal.webhooks!.deliverer.flush();
    expect(receiver.received.length).toBeGreaterThan(before);
  });
});

describe("webhooks over https", () => {
  it("sends to an https receiver, checking its certificate (a test CA given to the portal)", async () => {
    // A self-signed certificate for 127.0.0.1, made by openssl for this test.
    const dir = await mkdtemp(join(tmpdir(), "fsa-tls-"));
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"],
        ...["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
      ],
      { stdio: "ignore" },
    );
    const cert = await readFile(join(dir, "cert.pem"), "utf8");
    const received: string[] = [];
    const server = createHttpsServer({ key: await readFile(join(dir, "key.pem")), cert }, (req, res) => {
      received.push(String(req.headers["webhook-id"]));
      req.resume();
      req.on("end", () => res.writeHead(200).end("ok"));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    opened.push({ close: () => new Promise((done) => server.close(done)) });
    const url = `https://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    const trusting = await portalWith({ allow: ["127.0.0.1"], ca: cert });
    const client = await owner(trusting);
    const id = endpointId(await adding(client, url));
    await client.get(`/webhooks/${id}`);
    await client.post(`/webhooks/${id}/test`, {});
    await trusting.webhooks!.deliverer.flush();
    expect(received).toHaveLength(1);
    // A portal that does not trust the certificate sends nothing: the attempt fails on it, and the log says why.
    const wary = await portalWith({ allow: ["127.0.0.1"] });
    const other = await owner(wary);
    const refused = endpointId(await adding(other, url));
    await other.get(`/webhooks/${refused}`);
    await other.post(`/webhooks/${refused}/test`, {});
    await wary.webhooks!.deliverer.flush();
    expect(received).toHaveLength(1);
    expect((await other.get(`/webhooks/${refused}`)).text).toMatch(/self[- ]signed certificate/);
    await rm(dir, { recursive: true, force: true });
  });
});
