// Sign up, email verification, sign in and out, password reset.
import type { Hono } from "hono";
import { html } from "hono/html";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { clientAddress, fieldOf, formOf, pageContext, render, renderTooMany } from "./context.ts";
import { ResetRequestSchema, ResetSchema, SignInSchema, SignUpSchema, parseForm } from "./forms.ts";
import { mailWait, sendCounted, tooManyMails } from "./mail-limits.ts";
import { dummyHash, hashPassword, verifyPassword } from "./passwords.ts";
import { clearSessionCookie, writeSessionCookie } from "./session-cookies.ts";
import { createAccount, findAccount, findAccountByEmail, normalizeEmail, updateAccount } from "./store/accounts.ts";
import type { Account } from "./store/accounts.ts";
import { recordAudit } from "./store/audit.ts";
import { createSession, endAllSessions, endSession } from "./store/sessions.ts";
import { clearFailures, lockedFor, recordFailure } from "./store/throttle.ts";
import { consumeToken, issueToken, peekToken } from "./store/tokens.ts";
import {
  checkMail,
  confirmLink,
  deadLink,
  resetForm,
  resetRequestForm,
  signInForm,
  signUpForm,
} from "./views/auth-pages.ts";
import { notice } from "./views/layout.ts";

const strings = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).filter((e): e is [string, string] => typeof e[1] === "string"));

/** Mails `account` a verification link (counted against the mail limits of `address`, the client's). */
async function sendVerification(portal: Portal, account: Account, address: string): Promise<void> {
  const token = await issueToken(portal.db, account.id, "verify", account.email, portal.clock());
  await sendCounted(
    portal,
    { address, to: account.email },
    {
      to: account.email,
      subject: "Confirm your email address for the developer portal",
      text: `Open this link to confirm your address (it works once, for 24 hours):\n\n${portal.publicUrl()}/verify?token=${token}\n`,
    },
  );
}

/** Why an account that is not active cannot sign in. */
const notYet = (account: Account) =>
  account.status === "pending"
    ? html`<p role="status">
        Your email address is confirmed. An operator approves new accounts: we will mail you when yours is ready.
      </p>`
    : html`<p role="alert">This account is suspended. Write to the operator of this portal.</p>`;

/** Starts a session for `account` on this browser and records the sign-in. */
async function signIn(c: PortalContext, portal: Portal, account: Account, event: "signin" | "account.verified") {
  const now = portal.clock();
  const id = await createSession(portal.db, account.id, now);
  writeSessionCookie(c, c.get("secureCookies"), id);
  await recordAudit(portal.db, account.id, { at: now, event, detail: "", address: clientAddress(c) });
}

/** Adds the routes of signing up, in and out, verifying and resetting to `app`. */
export function registerAuthRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const ctx = (c: PortalContext) => pageContext(c, portal);

  app.get("/sign-up", (c) => render(c, portal, 200, "Sign up", signUpForm(ctx(c))));
  app.post("/sign-up", async (c) => {
    const body = strings(await formOf(c));
    const form = parseForm(SignUpSchema, body);
    if (!form.ok) return render(c, portal, 400, "Sign up", signUpForm(ctx(c), body, form.errors));
    const asker = { address: clientAddress(c), to: form.data.email };
    const wait = await mailWait(portal, asker);
    if (wait)
      return renderTooMany(
        c,
        portal,
        wait,
        "Sign up",
        html`${notice(tooManyMails(wait), "alert")}${signUpForm(ctx(c), body)}`,
      );
    const now = portal.clock();
    const password = await hashPassword(form.data.password);
    const status = portal.approval === "manual" ? "pending" : "active";
    const account = await createAccount(portal.db, { ...form.data, password, status }, now);
    if (account) {
      await recordAudit(portal.db, account.id, {
        at: now,
        event: "account.created",
        detail: "",
        address: clientAddress(c),
      });
      await sendVerification(portal, account, asker.address);
    } else {
      // The address has an account: tell its owner, not whoever typed it (the page says the same either way).
      await sendCounted(portal, asker, {
        to: normalizeEmail(form.data.email),
        subject: "Someone tried to sign up with your address",
        text: `You already have an account. Sign in at ${portal.publicUrl()}/sign-in, or reset your password at ${portal.publicUrl()}/reset.\n`,
      });
    }
    return render(
      c,
      portal,
      200,
      "Check your mail",
      checkMail(`We sent a link to ${normalizeEmail(form.data.email)}.`),
    );
  });

  app.get("/verify", async (c) => {
    const token = c.req.query("token") ?? "";
    if (!(await peekToken(portal.db, token, "verify", portal.clock())))
      return render(c, portal, 404, "Link expired", deadLink);
    return render(
      c,
      portal,
      200,
      "Confirm your email",
      confirmLink(
        ctx(c),
        "/verify",
        token,
        "One step left: confirm that this is your address.",
        "Confirm my email address",
      ),
    );
  });
  app.post("/verify", async (c) => {
    const token = await fieldOf(c, "token");
    const used = await consumeToken(portal.db, token, "verify", portal.clock());
    const account = used && (await findAccount(portal.db, used.accountId));
    if (!used || !account || account.email !== used.email) return render(c, portal, 404, "Link expired", deadLink);
    if (account.verified === null) await updateAccount(portal.db, account.id, { verified: portal.clock() });
    if (account.status !== "active") {
      await recordAudit(portal.db, account.id, {
        at: portal.clock(),
        event: "account.verified",
        detail: "",
        address: clientAddress(c),
      });
      return render(c, portal, 200, "Email confirmed", notYet(account));
    }
    await signIn(c, portal, account, "account.verified");
    return c.redirect("/keys?verified=1", 303);
  });

  app.get("/sign-in", (c) => {
    const text = c.req.query("reset")
      ? "Your password is changed: sign in with the new one."
      : c.req.query("signed-out")
        ? "You are signed out."
        : undefined;
    return render(c, portal, 200, "Sign in", signInForm(ctx(c), {}, {}, text ? { text, kind: "status" } : undefined));
  });
  app.post("/sign-in", async (c) => {
    const body = strings(await formOf(c));
    const form = parseForm(SignInSchema, body);
    if (!form.ok) return render(c, portal, 400, "Sign in", signInForm(ctx(c), body, form.errors));
    const now = portal.clock();
    const address = clientAddress(c);
    const keys = { address: `address:${address}`, account: `account:${normalizeEmail(form.data.email)}` };
    const wait = await lockedFor(portal.db, [keys.address, keys.account], now);
    if (wait > 0) {
      c.header("Retry-After", String(wait));
      const text = `Too many failed sign-ins: try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""}, or reset your password.`;
      return render(c, portal, 429, "Sign in", signInForm(ctx(c), body, {}, { text, kind: "alert" }));
    }
    const account = await findAccountByEmail(portal.db, form.data.email);
    const right = await verifyPassword(form.data.password, account?.password ?? (await dummyHash()));
    if (!account || !right) {
      await recordFailure(portal.db, keys.address, portal.throttle.address, now);
      await recordFailure(portal.db, keys.account, portal.throttle.account, now);
      if (account) await recordAudit(portal.db, account.id, { at: now, event: "signin.failed", detail: "", address });
      const text = "The email or the password is wrong.";
      return render(c, portal, 401, "Sign in", signInForm(ctx(c), body, {}, { text, kind: "alert" }));
    }
    await clearFailures(portal.db, keys.account);
    if (account.verified === null) {
      const wait = await mailWait(portal, { address, to: account.email });
      if (wait)
        return renderTooMany(
          c,
          portal,
          wait,
          "Confirm your email first",
          html`<p role="alert">Your address is not confirmed yet. ${tooManyMails(wait)}</p>`,
        );
      await sendVerification(portal, account, address);
      return render(
        c,
        portal,
        403,
        "Confirm your email first",
        checkMail(`Your address is not confirmed yet: we sent a new link to ${account.email}.`),
      );
    }
    if (account.status !== "active")
      return render(
        c,
        portal,
        403,
        account.status === "pending" ? "Waiting for approval" : "Account suspended",
        notYet(account),
      );
    await signIn(c, portal, account, "signin");
    return c.redirect("/keys", 303);
  });

  app.post("/sign-out", async (c) => {
    const id = c.get("sessionId");
    const account = c.get("account");
    if (id && account) {
      await endSession(portal.db, id);
      await recordAudit(portal.db, account.id, {
        at: portal.clock(),
        event: "signout",
        detail: "",
        address: clientAddress(c),
      });
    }
    clearSessionCookie(c, c.get("secureCookies"));
    return c.redirect("/sign-in?signed-out=1", 303);
  });

  app.get("/reset", (c) => render(c, portal, 200, "Reset your password", resetRequestForm(ctx(c))));
  app.post("/reset", async (c) => {
    const body = strings(await formOf(c));
    const form = parseForm(ResetRequestSchema, body);
    if (!form.ok) return render(c, portal, 400, "Reset your password", resetRequestForm(ctx(c), body, form.errors));
    const asker = { address: clientAddress(c), to: form.data.email };
    const wait = await mailWait(portal, asker);
    if (wait)
      return renderTooMany(
        c,
        portal,
        wait,
        "Reset your password",
        html`${notice(tooManyMails(wait), "alert")}${resetRequestForm(ctx(c), body)}`,
      );
    const account = await findAccountByEmail(portal.db, form.data.email);
    const token = account && (await issueToken(portal.db, account.id, "reset", account.email, portal.clock()));
    // Counted whether or not the address has an account: the limit says nothing about which ones do.
    await sendCounted(
      portal,
      asker,
      account && token
        ? {
            to: account.email,
            subject: "Reset your developer portal password",
            text: `Open this link to choose a new password (it works once, for 1 hour):\n\n${portal.publicUrl()}/reset/confirm?token=${token}\n\nIf you did not ask for this, ignore this mail.\n`,
          }
        : null,
    );
    return render(
      c,
      portal,
      200,
      "Check your mail",
      checkMail(`If ${normalizeEmail(form.data.email)} has an account, we sent it a link.`),
    );
  });
  app.get("/reset/confirm", async (c) => {
    const token = c.req.query("token") ?? "";
    if (!(await peekToken(portal.db, token, "reset", portal.clock())))
      return render(c, portal, 404, "Link expired", deadLink);
    return render(c, portal, 200, "Choose a new password", resetForm(ctx(c), token));
  });
  app.post("/reset/confirm", async (c) => {
    const body = strings(await formOf(c));
    const form = parseForm(ResetSchema, body);
    if (!form.ok)
      return render(c, portal, 400, "Choose a new password", resetForm(ctx(c), body.token ?? "", form.errors));
    const now = portal.clock();
    const used = await consumeToken(portal.db, form.data.token, "reset", now);
    const account = used && (await findAccount(portal.db, used.accountId));
    if (!used || !account || account.email !== used.email) return render(c, portal, 404, "Link expired", deadLink);
    await updateAccount(portal.db, account.id, {
      password: await hashPassword(form.data.password),
      verified: account.verified ?? now,
    });
    await endAllSessions(portal.db, account.id);
    await clearFailures(portal.db, `account:${account.email}`);
    await recordAudit(portal.db, account.id, {
      at: now,
      event: "password.reset",
      detail: "",
      address: clientAddress(c),
    });
    return c.redirect("/sign-in?reset=1", 303);
  });
}
