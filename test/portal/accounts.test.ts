// Accounts over real HTTP: sign up, the verification link from a real SMTP server, sign in and out, password reset,
// security headers and cookies; against the portal on port 0 with its SQLite file in a temp dir.
import { describe, expect, it } from "vitest";
import { PortalClient, signUpAndVerify, startPortalWithSmtp } from "./portal-client.ts";
import { linkIn } from "./smtp-server.ts";

describe("portal accounts", () => {
  const env = startPortalWithSmtp();

  it("signs up, verifies the address by the mailed link, and lands on the keys page", async () => {
    const client = new PortalClient(env.portal.url);
    await signUpAndVerify(client, env.smtp, { email: "ann@example.test", partner: "Ann's Deals" });
    const keys = await client.get("/keys");
    expect(keys.status).toBe(200);
    expect(keys.text).toContain("No keys yet");
    expect((await client.get("/account")).text).toContain("<strong>Ann&#39;s Deals</strong>");
  });

  it("sends every page with a strict CSP and the usual security headers; the session cookie is __Host-, HttpOnly, Lax", async () => {
    const client = new PortalClient(env.portal.url);
    const page = await client.get("/sign-in");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/https?:|\*/);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("cache-control")).toBe("no-store");
    await signUpAndVerify(client, env.smtp, { email: "cookie@example.test" });
    const res = await fetch(`${env.portal.url}/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: env.portal.url,
        cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      },
      body: new URLSearchParams({
        email: "cookie@example.test",
        password: "correct horse battery",
        _csrf: client.csrf,
      }),
    });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-session="))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Domain=/);
  });

  it("answers an unknown email and a wrong password the same way", async () => {
    const client = new PortalClient(env.portal.url);
    await signUpAndVerify(client, env.smtp, { email: "same@example.test" });
    const other = new PortalClient(env.portal.url);
    await other.get("/sign-in");
    const wrong = await other.post("/sign-in", { email: "same@example.test", password: "not the password" });
    await other.get("/sign-in");
    const unknown = await other.post("/sign-in", { email: "nobody@example.test", password: "not the password" });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const message = (p: { text: string }) => /<p class="notice alert" role="alert">([^<]*)<\/p>/.exec(p.text)?.[1];
    expect(message(wrong)).toBe("The email or the password is wrong.");
    expect(message(unknown)).toBe(message(wrong));
  });

  it("signs out, and the old session cookie is refused afterwards", async () => {
    const client = new PortalClient(env.portal.url);
    await signUpAndVerify(client, env.smtp, { email: "thief@example.test" });
    const stolen = client.cookies.get("__Host-session")!;
    await client.get("/keys");
    const out = await client.post("/sign-out", {});
    expect(out.text).toContain("Sign in");
    const replay = await fetch(`${env.portal.url}/keys`, {
      headers: { cookie: `__Host-session=${stolen}` },
      redirect: "manual",
    });
    expect(replay.status).toBe(303);
    expect(replay.headers.get("location")).toBe("/sign-in");
  });

  it("resets a password by the mailed link, ending every session; the old password stops working", async () => {
    const client = new PortalClient(env.portal.url);
    await signUpAndVerify(client, env.smtp, { email: "forgot@example.test", password: "the old password 1" });
    const elsewhere = client.cookies.get("__Host-session")!;
    const anon = new PortalClient(env.portal.url);
    await anon.get("/reset");
    const asked = await anon.post("/reset", { email: "forgot@example.test" });
    expect(asked.text).toContain("has an account, we sent it a link");
    await anon.get("/reset");
    const unknown = await anon.post("/reset", { email: "nobody-here@example.test" });
    expect(unknown.status).toBe(asked.status);
    const link = new URL(linkIn(await env.smtp.waitForMail("forgot@example.test", /Reset/)));
    await anon.get(link.pathname + link.search);
    const short = await anon.post("/reset/confirm", { token: link.searchParams.get("token")!, password: "short" });
    expect(short.status).toBe(400);
    expect(short.text).toContain("Password must be at least 12 characters");
    const set = await anon.post("/reset/confirm", {
      token: link.searchParams.get("token")!,
      password: "the new password 2",
    });
    expect(set.url).toBe("/sign-in?reset=1");
    const again = await anon.post("/reset/confirm", {
      token: link.searchParams.get("token")!,
      password: "the new password 3",
    });
    expect(again.status).toBe(404); // a link works once
    const old = await fetch(`${env.portal.url}/keys`, {
      headers: { cookie: `__Host-session=${elsewhere}` },
      redirect: "manual",
    });
    expect(old.status).toBe(303);
    await anon.get("/sign-in");
    expect((await anon.post("/sign-in", { email: "forgot@example.test", password: "the old password 1" })).status).toBe(
      401,
    );
    await anon.get("/sign-in");
    const ok = await anon.post("/sign-in", { email: "forgot@example.test", password: "the new password 2" });
    expect(ok.url).toBe("/keys");
  });

  it("shows each invalid field's message next to it, keeping what was typed", async () => {
    const client = new PortalClient(env.portal.url);
    await client.get("/sign-up");
    const page = await client.post("/sign-up", { email: "not-an-email", password: "short", partner: "" });
    expect(page.status).toBe(400);
    expect(page.text).toMatch(
      /id="f-email"[\s\S]*?value="not-an-email"[\s\S]*?aria-invalid="true"[\s\S]*?<p class="error" id="e-email">Enter an email address/,
    );
    expect(page.text).toMatch(/<p class="error" id="e-password">Password must be at least 12 characters<\/p>/);
    expect(page.text).toMatch(/<p class="error" id="e-partner">Partner name is required<\/p>/);
  });
});
