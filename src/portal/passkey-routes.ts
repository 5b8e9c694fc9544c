// The account's passkeys (on its two-factor page): adding one (the password again, then the browser makes it with
// the options and challenge of that page), renaming, and removing (the password again). The first passkey of an
// account with no second factor turns two-factor on: it gets ten recovery codes, and its other sessions end; removing
// the last second factor turns it off.
import type { Hono } from "hono";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { accountOf, clientAddress, formOf, pageContext, render, requireAccount } from "./context.ts";
import { KeyNameSchema, TwoFactorSetupSchema, parseForm } from "./forms.ts";
import { checkRegistration, parseCredential, registrationOptions } from "./passkeys.ts";
import { verifyPassword } from "./passwords.ts";
import {
  addPasskey,
  keepChallenge,
  listPasskeys,
  removePasskey,
  renamePasskey,
  useChallenge,
} from "./store/passkeys.ts";
import { endOtherSessions } from "./store/sessions.ts";
import { clearSecondFactor, findTotp, hasSecondFactor, replaceRecoveryCodes } from "./store/two-factor.ts";
import { recordAudit } from "./store/audit.ts";
import { auditTwoFactor, renewCodes, showTwoFactor } from "./two-factor-routes.ts";
import { createPasskeyPage } from "./views/passkey-pages.ts";
import { recoveryCodesPage } from "./views/two-factor-pages.ts";

const WRONG_PASSWORD = "The current password is wrong";
/** A credential ID as it can appear in a path (base64url). */
const CREDENTIAL_ID = /^[A-Za-z0-9_-]{1,1400}$/;

/** Adds the passkeys' routes of the account's two-factor page to `app` (behind the page's requireAccount). */
export function registerPasskeyRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  app.use("/account/two-factor/passkeys", requireAccount);
  app.use("/account/two-factor/passkeys/*", requireAccount);

  // The name and the password, then the page that makes the passkey: its challenge kept for this session's form token.
  app.post("/account/two-factor/passkeys/new", async (c) => {
    const body = await formOf(c);
    const named = parseForm(KeyNameSchema, body);
    const confirmed = parseForm(TwoFactorSetupSchema, body);
    const account = accountOf(c);
    const errors = { ...(named.ok ? {} : named.errors), ...(confirmed.ok ? {} : confirmed.errors) };
    if (confirmed.ok && !(await verifyPassword(confirmed.data.current, account.password)))
      errors.current = WRONG_PASSWORD;
    if (!named.ok || Object.keys(errors).length)
      return showTwoFactor(portal, c, errors.current === WRONG_PASSWORD ? 401 : 400, { form: "passkey-add", errors });
    const options = await registrationOptions(portal.publicUrl(), account, await listPasskeys(portal.db, account.id));
    const holder = { purpose: "register" as const, accountId: account.id, csrf: c.get("csrf") };
    await keepChallenge(portal.db, options.challenge, holder, portal.clock());
    return render(c, portal, 200, "Add a passkey", createPasskeyPage(pageContext(c, portal), named.data.name, options));
  });

  // What the browser made: checked against the challenge (used once, this account's, this browser's), then kept.
  app.post("/account/two-factor/passkeys", async (c) => {
    const body = await formOf(c);
    const named = parseForm(KeyNameSchema, body);
    const sent = parseCredential(body.response);
    const account = accountOf(c);
    const now = portal.clock();
    const use = sent && (await useChallenge(portal.db, sent.challenge, c.get("csrf"), now));
    const made =
      named.ok && sent && use && use.purpose === "register" && use.accountId === account.id
        ? await checkRegistration(portal.publicUrl(), sent.credential, sent.challenge)
        : null;
    if (!named.ok || !made) {
      const text = "The passkey was not added: its answer was not for this page, or came too late. Try again.";
      return showTwoFactor(portal, c, 400, { message: { text, kind: "alert" } });
    }
    const name = named.data.name;
    const first = !(await hasSecondFactor(portal.db, account.id));
    const key = { ...made, accountId: account.id, name, created: now };
    const added = await auditTwoFactor(portal, c, { event: "passkey.added", name, first }, `"${name}"`, (tx) =>
      addPasskey(tx, key),
    );
    if (!added) {
      const text = "This passkey is added already.";
      return showTwoFactor(portal, c, 409, { message: { text, kind: "alert" } });
    }
    if (!first)
      return showTwoFactor(portal, c, 200, { message: { text: `The passkey “${name}” is added.`, kind: "status" } });
    // The account's first second factor: recovery codes (for a lost device), and sessions elsewhere signed out.
    const { codes, hashes } = renewCodes();
    await replaceRecoveryCodes(portal.db, account.id, hashes, now);
    await endOtherSessions(portal.db, account.id, c.get("sessionId"));
    const intro = `The passkey “${name}” is added, and two-factor sign-in is on. Your other sessions are signed out.`;
    return render(c, portal, 200, "Your recovery codes", recoveryCodesPage(intro, codes));
  });

  app.post("/account/two-factor/passkeys/:id/rename", async (c) => {
    const id = c.req.param("id");
    const form = parseForm(KeyNameSchema, await formOf(c));
    if (!form.ok) return showTwoFactor(portal, c, 400, { form: `rename:${id}`, errors: form.errors });
    const account = accountOf(c);
    if (!CREDENTIAL_ID.test(id) || !(await renamePasskey(portal.db, account.id, id, form.data.name)))
      return showTwoFactor(portal, c, 409, { message: { text: "There is no such passkey.", kind: "alert" } });
    const entry = { at: portal.clock(), event: "passkey.renamed" as const, detail: `"${form.data.name}"` };
    await recordAudit(portal.db, account.id, { ...entry, address: clientAddress(c) });
    return showTwoFactor(portal, c, 200, { message: { text: "The passkey is renamed.", kind: "status" } });
  });

  app.post("/account/two-factor/passkeys/:id/remove", async (c) => removePasskeyRoute(portal, c));
}

/** Removes a passkey, the password confirmed; the last second factor removed, two-factor is off. */
async function removePasskeyRoute(portal: Portal, c: PortalContext) {
  const id = c.req.param("id") ?? "";
  const form = parseForm(TwoFactorSetupSchema, await formOf(c));
  if (!form.ok) return showTwoFactor(portal, c, 400, { form: `remove:${id}`, errors: form.errors });
  const account = accountOf(c);
  if (!(await verifyPassword(form.data.current, account.password)))
    return showTwoFactor(portal, c, 401, { form: `remove:${id}`, errors: { current: WRONG_PASSWORD } });
  const keys = CREDENTIAL_ID.test(id) ? await listPasskeys(portal.db, account.id) : [];
  const key = keys.find((k) => k.id === id);
  if (!key) return showTwoFactor(portal, c, 409, { message: { text: "There is no such passkey.", kind: "alert" } });
  // Whether this is the last second factor, for the mail (rendered before the change); the change decides again.
  const totp = await findTotp(portal.db, account.id);
  const last = !totp?.confirmed && keys.length === 1;
  let off = false;
  const removed = await auditTwoFactor(
    portal,
    c,
    { event: "passkey.removed", name: key.name, off: last },
    `"${key.name}"`,
    async (tx) => {
      if (!(await removePasskey(tx, account.id, id))) return false;
      off = !(await hasSecondFactor(tx, account.id));
      if (off) await clearSecondFactor(tx, account.id);
      return true;
    },
  );
  if (!removed) return showTwoFactor(portal, c, 409, { message: { text: "There is no such passkey.", kind: "alert" } });
  const text = off
    ? `The passkey “${key.name}” is removed. It was your last second factor: two-factor sign-in is off.`
    : `The passkey “${key.name}” is removed.`;
  return showTwoFactor(portal, c, 200, { message: { text, kind: "status" } });
}
