// The refusal of common and simple new passwords, as a partner meets it over real HTTP: sign-up and password change
// answer 400 with the message beside the field, and make or change nothing.
import { describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../src/portal/passwords.ts";
import { createAccount, findAccountByEmail, updateAccount } from "../../src/portal/store/accounts.ts";
import { PortalClient, startPortalWithSmtp } from "./portal-client.ts";

describe("new passwords over HTTP", () => {
  const env = startPortalWithSmtp();

  it("sign-up refuses password1234 and aaaaaaaaaaaa (400, the reason beside the field) and makes no account", async () => {
    const client = new PortalClient(env.portal.url);
    for (const [password, reason] of [
      ["password1234", "This password is one of the most common ones, found in leaked password lists"],
      ["aaaaaaaaaaaa", "This password is a simple pattern"],
    ]) {
      await client.get("/sign-up");
      const page = await client.post("/sign-up", { email: "weak@example.test", password: password!, partner: "P" });
      expect(page.status).toBe(400);
      expect(page.text).toMatch(new RegExp(`id="e-password">${reason}`));
    }
    expect(await findAccountByEmail(env.portal.db, "weak@example.test")).toBeNull();
    expect(env.smtp.mails().filter((m) => m.to === "weak@example.test")).toHaveLength(0);
  }, 60_000);

  it("a password change to password1234 is refused and the password stays as it was", async () => {
    const email = "changer@example.test";
    const made = await createAccount(
      env.portal.db,
      { email, partner: "P", password: await hashPassword("correct horse battery") },
      env.portal.clock.now,
    );
    await updateAccount(env.portal.db, made!.id, { verified: env.portal.clock.now, status: "active" });
    const client = new PortalClient(env.portal.url);
    await client.get("/sign-in");
    expect((await client.post("/sign-in", { email, password: "correct horse battery" })).url).toBe("/keys");
    await client.get("/account");
    const page = await client.post("/account/password", { current: "correct horse battery", password: "password1234" });
    expect(page.status).toBe(400);
    expect(page.text).toContain("one of the most common ones");
    const account = await findAccountByEmail(env.portal.db, email);
    expect(await verifyPassword("correct horse battery", account!.password)).toBe(true);
  }, 60_000);
});
