// Mailed links die with the credentials they were issued under, over real HTTP with a real SMTP server: a second
// verification link used after the first signs nobody in; a reset link or a new-email link asked for before a
// password change does nothing after it. An email change mails the old address and signs out every other session.
import { describe, expect, it } from "vitest";
import { PortalClient, signUpAndVerify, startPortalWithSmtp } from "./portal-client.ts";
import { linkIn } from "./smtp-server.ts";
import type { ReceivedMail } from "./smtp-server.ts";

const CASE_MS = 60_000;
const PASSWORD = "violet tractor moonbeam";
const NEW_PASSWORD = "copper lantern seventeen";

describe("mailed links and credential changes", () => {
  const env = startPortalWithSmtp();

  /** The mails to `to` about `subject`, oldest first. */
  const mailsTo = (to: string, subject: RegExp) =>
    env.smtp.mails().filter((m) => m.to === to && subject.test(m.subject));
  const tokenOf = (mail: ReceivedMail) => new URL(linkIn(mail)).searchParams.get("token")!;
  const post = async (client: PortalClient, path: string, fields: Record<string, string>) => {
    await client.get(path);
    return client.post(path, fields);
  };
  const signedIn = async (client: PortalClient) => (await client.get("/keys")).url === "/keys";

  it(
    "signs nobody in with a second verification link used after the first and after a reset",
    async () => {
      const email = "twice@example.test";
      const first = new PortalClient(env.portal.url);
      expect((await post(first, "/sign-up", { email, password: PASSWORD, partner: "Twice" })).status).toBe(200);
      // Signing in before confirming mails another link.
      expect((await post(new PortalClient(env.portal.url), "/sign-in", { email, password: PASSWORD })).status).toBe(
        403,
      );
      const [one, two] = mailsTo(email, /Confirm your email/).map(tokenOf);
      expect(one && two).toBeTruthy();
      await first.get(`/verify?token=${one}`);
      expect((await first.post("/verify", { token: one! })).url).toBe("/keys?verified=1");
      await post(first, "/reset", { email });
      const reset = tokenOf(mailsTo(email, /Reset your/)[0]!);
      await first.get(`/reset/confirm?token=${reset}`);
      expect((await first.post("/reset/confirm", { token: reset, password: NEW_PASSWORD })).url).toBe(
        "/sign-in?reset=1",
      );

      const holder = new PortalClient(env.portal.url);
      expect((await holder.get(`/verify?token=${two}`)).status).toBe(404);
      await holder.get("/sign-in");
      const used = await holder.post("/verify", { token: two! });
      expect(used.status).toBe(404);
      expect(used.text).toContain("Link expired");
      expect(holder.cookies.has("__Host-session")).toBe(false);
      expect(await signedIn(holder)).toBe(false);
    },
    CASE_MS,
  );

  it(
    "refuses a reset link asked for before a password change",
    async () => {
      const email = "changer@example.test";
      const owner = new PortalClient(env.portal.url);
      await signUpAndVerify(owner, env.smtp, { email, password: PASSWORD });
      await post(new PortalClient(env.portal.url), "/reset", { email });
      const token = tokenOf(mailsTo(email, /Reset your/)[0]!);
      await owner.get("/account");
      expect((await owner.post("/account/password", { current: PASSWORD, password: NEW_PASSWORD })).status).toBe(200);

      const holder = new PortalClient(env.portal.url);
      expect((await holder.get(`/reset/confirm?token=${token}`)).status).toBe(404);
      await holder.get("/reset");
      expect((await holder.post("/reset/confirm", { token, password: "someone else's choice" })).status).toBe(404);
      expect((await post(new PortalClient(env.portal.url), "/sign-in", { email, password: NEW_PASSWORD })).url).toBe(
        "/keys",
      );
    },
    CASE_MS,
  );

  it(
    "refuses a new-email link asked for before a password change",
    async () => {
      const email = "stays@example.test";
      const owner = new PortalClient(env.portal.url);
      await signUpAndVerify(owner, env.smtp, { email, password: PASSWORD });
      await owner.get("/account");
      await owner.post("/account/email", { email: "elsewhere@example.test", current: PASSWORD });
      const token = tokenOf(mailsTo("elsewhere@example.test", /Confirm your new email/)[0]!);
      await owner.get("/account");
      await owner.post("/account/password", { current: PASSWORD, password: NEW_PASSWORD });

      await owner.get(`/email/confirm?token=${token}`);
      expect((await owner.post("/email/confirm", { token })).status).toBe(404);
      expect((await owner.get("/account")).text).toContain(email);
    },
    CASE_MS,
  );

  it(
    "mails the old address when the email changes, and signs out every other session but this one",
    async () => {
      const [old, moved] = ["before@example.test", "after@example.test"];
      const here = new PortalClient(env.portal.url);
      await signUpAndVerify(here, env.smtp, { email: old, password: PASSWORD });
      const elsewhere = new PortalClient(env.portal.url);
      expect((await post(elsewhere, "/sign-in", { email: old, password: PASSWORD })).url).toBe("/keys");
      await here.get("/account");
      await here.post("/account/email", { email: moved, current: PASSWORD });
      const token = tokenOf(mailsTo(moved, /Confirm your new email/)[0]!);
      await here.get(`/email/confirm?token=${token}`);
      expect((await here.post("/email/confirm", { token })).text).toContain(`Your account's address is now ${moved}`);

      const [notice] = mailsTo(old, /new email address/);
      expect(notice?.body).toContain(`changed from ${old} to ${moved}`);
      expect(await signedIn(elsewhere)).toBe(false);
      expect(await signedIn(here)).toBe(true);
      expect((await here.get("/account")).text).toContain(moved);
    },
    CASE_MS,
  );
});
