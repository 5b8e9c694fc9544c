// "Send the link again" on the check-your-mail page, over real HTTP with a real SMTP server: a second verification
// mail arrives, the link of either mail confirms the address, the form is held to the mail limits (429 with
// Retry-After), and an address with a confirmed account gets a note, never a link. Also the portal's icon.
import { describe, expect, it } from "vitest";
import { DEFAULT_MAIL_LIMITS } from "../../src/portal/mail-limits.ts";
import { PortalClient, startPortalWithSmtp } from "./portal-client.ts";
import { linkIn } from "./smtp-server.ts";

const LIMIT = DEFAULT_MAIL_LIMITS.recipient.failures;

describe("send the link again", () => {
  const env = startPortalWithSmtp();
  const mailsTo = (to: string, subject: RegExp) =>
    env.smtp.mails().filter((m) => m.to === to && subject.test(m.subject));

  /** Signs `email` up (unconfirmed): the client is on the check-your-mail page. */
  async function signUp(email: string): Promise<PortalClient> {
    const client = new PortalClient(env.portal.url);
    await client.get("/sign-up");
    const page = await client.post("/sign-up", { email, password: "correct horse battery", partner: "Resenders" });
    expect(page.status).toBe(200);
    return client;
  }

  it("the check-your-mail page has the form (with its CSRF token); it sends a second link, and either confirms", async () => {
    const email = "again@example.test";
    const client = await signUp(email);
    expect(client.last!.text).toContain('action="/sign-up/resend"');
    expect(client.last!.text).toMatch(/name="_csrf" value="[^"]+"/);
    expect(client.last!.text).toContain(`name="email" value="${email}"`);
    const first = await env.smtp.waitForMail(email, /Confirm your email/);
    const again = await client.post("/sign-up/resend", { email });
    expect(again.status).toBe(200);
    expect(again.text).toContain("we sent it a new link");
    expect(again.text).toContain('action="/sign-up/resend"'); // and again
    const mails = mailsTo(email, /Confirm your email/);
    expect(mails).toHaveLength(2);
    expect(linkIn(mails[1]!)).not.toBe(linkIn(first));
    // Without the page's token the form is refused, as every form of the portal.
    expect((await client.post("/sign-up/resend", { email }, { csrf: "forged" })).status).toBe(403);
    expect(mailsTo(email, /Confirm your email/)).toHaveLength(2);
    // The second link confirms the address.
    const link = new URL(linkIn(mails[1]!));
    await client.get(link.pathname + link.search);
    const confirmed = await client.post("/verify", { token: link.searchParams.get("token")! });
    expect(confirmed.text).toContain("Your email address is confirmed");
  });

  it(`is held to the mail limits: ${LIMIT} mails an hour to one address, then 429 with Retry-After and no mail`, async () => {
    const email = "limited@example.test";
    const client = await signUp(email); // the first mail
    for (let i = 1; i < LIMIT; i++) expect((await client.post("/sign-up/resend", { email })).status).toBe(200);
    expect(mailsTo(email, /Confirm your email/)).toHaveLength(LIMIT);
    const refused = await client.post("/sign-up/resend", { email });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.text).toContain("We have sent too many mails");
    expect(refused.text).toContain("Send the link again");
    expect(mailsTo(email, /Confirm your email/)).toHaveLength(LIMIT);
    // An hour later the limit has room again.
    env.portal.clock.now += 2 * 3600_000;
    expect((await client.post("/sign-up/resend", { email })).status).toBe(200);
    expect(mailsTo(email, /Confirm your email/)).toHaveLength(LIMIT + 1);
  });

  it("to an address whose account is confirmed, or that has none: the same page; a note to the owner, no link", async () => {
    const email = "confirmed@example.test";
    const client = await signUp(email);
    const link = new URL(linkIn(await env.smtp.waitForMail(email, /Confirm your email/)));
    await client.get(link.pathname + link.search);
    await client.post("/verify", { token: link.searchParams.get("token")! });
    const stranger = new PortalClient(env.portal.url);
    await stranger.get("/sign-up");
    const [known, unknown] = [
      await stranger.post("/sign-up/resend", { email }),
      await stranger.post("/sign-up/resend", { email: "nobody@example.test" }),
    ];
    expect([known.status, unknown.status]).toEqual([200, 200]);
    expect(known.text).toContain(`If ${email} has an account waiting to be confirmed, we sent it a new link.`);
    expect(unknown.text).toContain(
      `If nobody@example.test has an account waiting to be confirmed, we sent it a new link.`,
    );
    expect(mailsTo(email, /Confirm your email/)).toHaveLength(1);
    expect(mailsTo(email, /Someone tried to sign up/)).toHaveLength(1);
    expect(mailsTo("nobody@example.test", /./)).toHaveLength(0);
  });

  it("the reset request's page sends the reset link again", async () => {
    const email = "reset-again@example.test";
    const client = await signUp(email);
    await client.get("/reset");
    const page = await client.post("/reset", { email });
    expect(page.text).toContain('action="/reset"');
    await client.post("/reset", { email });
    expect(mailsTo(email, /Reset your/)).toHaveLength(2);
  });

  it("serves /favicon.ico, an icon every page links to", async () => {
    const res = await fetch(`${env.portal.url}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/x-icon");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.subarray(0, 4)]).toEqual([0, 0, 1, 0]); // an ICO
    expect((await new PortalClient(env.portal.url).get("/sign-in")).text).toContain('rel="icon" href="/favicon.ico"');
  });
});
