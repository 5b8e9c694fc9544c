// Issue 38's "sees the signing secret once", over real HTTP on SQLite and PostgreSQL: adding an endpoint or rotating
// its secret answers 303 to the endpoint's page (POST, redirect, GET), which shows the new secret once (the one the
// endpoint signs with, Cache-Control: no-store); a reload shows the page without it and makes nothing again; ten views
// at once show it once; another session of the same account does not see it (nor take it); it waits 5 minutes at most.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { first } from "../../src/db/database.ts";
import { SECRET_REVEAL_TTL_MS } from "../../src/portal/webhooks/secret-reveals.ts";
import { unsealWebhookSecret } from "../../src/portal/webhooks/signing.ts";
import { bothDatabases, withPostgresAndSmtp } from "./postgres-server.ts";
import type { PostgresServer } from "./postgres-server.ts";
import { PortalClient, signUpAndVerify, startTestPortal } from "./portal-client.ts";
import type { Page, TestPortal } from "./portal-client.ts";
import type { SmtpServer } from "./smtp-server.ts";
import { heldTimers } from "./webhook-receiver.ts";

/** The secret a page shows, if it shows one. */
const shownSecret = (page: Page) =>
  /id="new-secret" class="secret" type="text" readonly value="(whsec_[^"]+)"/.exec(page.text)?.[1];
const SHOWN_ONCE = "The signing secret was shown once, when it was made, and is not shown again.";

/** Sends a form as `client.post` does (its cookies, the last page's CSRF token, the origin), not following a redirect. */
async function postUnfollowed(client: PortalClient, path: string, fields: Record<string, string>) {
  const res = await fetch(new URL(path, client.base), {
    method: "POST",
    body: new URLSearchParams({ ...fields, _csrf: client.csrf }),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: new URL(client.base).origin,
      cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
    },
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("location") ?? "", text: await res.text() };
}

let postgres: PostgresServer;
let smtp: SmtpServer;
withPostgresAndSmtp((p, s) => ([postgres, smtp] = [p, s]));

describe.each(bothDatabases(() => postgres))("a new webhook secret shown once, on $name", ({ name, url }) => {
  const secretKey = randomBytes(32);
  let portal: TestPortal;
  let n = 0;
  /** A new owner, signed in, and their email. */
  const owner = async () => {
    const email = `reveal-${n++}-${name.toLowerCase()}@example.test`;
    const client = new PortalClient(portal.url);
    await signUpAndVerify(client, smtp, { email });
    return { client, email };
  };
  /** The secret endpoint `id` signs with now, unsealed from the database. */
  const signingSecret = async (id: string) => {
    const row = await first(portal.db, "SELECT secret FROM webhook_endpoints WHERE id = ?", [id]);
    return unsealWebhookSecret(secretKey, id, String(row?.secret));
  };
  /** Adds an endpoint without following the redirect: the answer, and the endpoint's ID from its Location. */
  const add = async (client: PortalClient) => {
    await client.get("/webhooks");
    const added = await postUnfollowed(client, "/webhooks", { url: "http://127.0.0.1:9/hook" });
    return { added, id: /^\/webhooks\/([a-z0-9]{16})\?done=secret$/.exec(added.location)?.[1] ?? "" };
  };

  beforeAll(async () => {
    portal = await startTestPortal(smtp, {
      databaseUrl: await url(),
      secretKey,
      webhookSettings: { allow: ["127.0.0.0/8"], scheduler: heldTimers().scheduler },
    });
  });
  afterAll(async () => {
    await portal?.close();
  });

  it("adds and rotates by POST, redirect, GET: the secret once on the endpoint's page, a reload without it", async () => {
    const { client } = await owner();
    const { added, id } = await add(client);
    expect(added.status).toBe(303);
    expect(id).toMatch(/^[a-z0-9]{16}$/);
    expect(added.text).not.toContain("whsec_");
    const shown = await client.get(added.location);
    expect(shown.status).toBe(200);
    expect(shown.headers.get("cache-control")).toBe("no-store");
    expect(shown.text).toContain("The endpoint is added.");
    expect(shownSecret(shown)).toBe(await signingSecret(id));
    // A reload: the same GET, which shows the page without the secret and adds nothing.
    const reloaded = await client.get(added.location);
    expect(reloaded.status).toBe(200);
    expect(shownSecret(reloaded)).toBeUndefined();
    expect(reloaded.text).not.toContain("whsec_");
    expect(reloaded.text).toContain(SHOWN_ONCE);
    expect(reloaded.text).toContain("Rotate the secret");
    expect((await client.get("/webhooks")).text.match(/Settings and log/g)).toHaveLength(1);

    const rotated = await postUnfollowed(client, `/webhooks/${id}/rotate`, { grace: "now" });
    expect(rotated).toMatchObject({ status: 303, location: `/webhooks/${id}?done=secret` });
    const next = await client.get(rotated.location);
    expect(next.text).toContain("The secret is replaced.");
    expect(shownSecret(next)).toBe(await signingSecret(id));
    expect(shownSecret(next)).not.toBe(shownSecret(shown));
    const again = await client.get(rotated.location);
    expect(shownSecret(again)).toBeUndefined();
    expect(again.text).toContain(SHOWN_ONCE);
    // Reloaded, the rotation was not made again: the secret shown is the one that signs.
    expect(await signingSecret(id)).toBe(shownSecret(next));
  });

  it("shows the secret to one of ten views at once", async () => {
    const { client } = await owner();
    const { added, id } = await add(client);
    const pages = await Promise.all(Array.from({ length: 10 }, () => client.get(added.location)));
    const secrets = pages.map(shownSecret).filter((s) => s !== undefined);
    expect(secrets).toEqual([await signingSecret(id)]);
    expect(pages.filter((p) => p.text.includes(SHOWN_ONCE))).toHaveLength(9);
  });

  it("shows it to the session that made it only: not to another session of the same account, nor takes it", async () => {
    const { client, email } = await owner();
    const other = new PortalClient(portal.url);
    await other.get("/sign-in");
    await other.post("/sign-in", { email, password: "correct horse battery" });
    expect(other.cookies.size).toBeGreaterThan(0);
    const { added, id } = await add(client);
    const seen = await other.get(added.location);
    expect(seen.status).toBe(200);
    expect(seen.text).toContain("Rotate the secret"); // the endpoint's page, as an owner sees it
    expect(shownSecret(seen)).toBeUndefined();
    expect(shownSecret(await client.get(added.location))).toBe(await signingSecret(id));
    // Another organisation's member: no such endpoint.
    const stranger = await owner();
    expect((await stranger.client.get(added.location)).status).toBe(404);
  });

  it("waits 5 minutes for its page, no more", async () => {
    const { client } = await owner();
    const { added } = await add(client);
    portal.clock.now += SECRET_REVEAL_TTL_MS + 1;
    const late = await client.get(added.location);
    expect(shownSecret(late)).toBeUndefined();
    expect(late.text).toContain(SHOWN_ONCE);
  });
});
