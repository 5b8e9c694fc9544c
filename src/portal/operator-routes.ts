// The operator pages' routes, for accounts with the admin role only (a 404 to anyone else): every account with its
// keys, approve, suspend (with a reason and a confirmation; the partner is mailed the reason) and reinstate an
// account, an account's or a key's rate and burst, the keys `npm run keys` made, and every account's trail. Each
// action is recorded on the account it changed, with the operator's address.
import type { Hono } from "hono";
import { z } from "zod";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { accountOf, clientAddress, fieldOf, formOf, pageContext, render, requireOperator } from "./context.ts";
import { LimitsSchema, parseForm } from "./forms.ts";
import type { Queries } from "../db/database.ts";
import { KeyInputError } from "../keys/keys-file.ts";
import type { OperatorLimits } from "./operator-keys.ts";
import {
  keysOfAccounts,
  listOperatorKeys,
  setAccountKeyLimits,
  setAccountSuspended,
  setOneKeyLimits,
} from "./operator-keys.ts";
import { listPartnerKeys } from "./partner-keys.ts";
import { organisationRecipients, recordSecurityEvent } from "./security-mail.ts";
import type { SecurityEvent, SecurityNotice } from "./security-mail.ts";
import { findAccount, findAccounts, listAccounts, updateAccount } from "./store/accounts.ts";
import type { Account } from "./store/accounts.ts";
import { listAllAudit, listAudit, recordAudit } from "./store/audit.ts";
import type { AuditEvent } from "./store/audit.ts";
import { listMembers, listMemberships } from "./store/organisations.ts";
import { endAllSessions } from "./store/sessions.ts";
import { keysUse, trafficWindow } from "./usage-reads.ts";
import type { TrafficSpan } from "./usage-reads.ts";
import { accountsByTraffic, requestsOfAccounts } from "../usage/store.ts";
import type { OperatorForms } from "./views/operator-pages.ts";
import { accountsPage, auditPage, operatorAccountPage, operatorKeysPage } from "./views/operator-pages.ts";

/** Accounts, and events, on one page of a list. */
const PAGE = 50;
const DONE: Record<string, string> = {
  approved: "The account is approved.",
  suspended:
    "The account is suspended: the API refuses its keys within 2 seconds, and its partner is mailed the reason.",
  reinstated: "The account is reinstated: its keys work again within 2 seconds.",
  limits: "The limits are set: the API applies them within 2 seconds.",
};
const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** The longest reason for a suspension, in characters. */
const REASON_MAX = 500;

/** The suspension form: a reason (one line, mailed to the partner and kept on its trail) and the box confirming it. */
const SuspendSchema = z.object({
  reason: z
    .string("Give a reason: it is mailed to the partner")
    .trim()
    .min(1, "Give a reason: it is mailed to the partner")
    .max(REASON_MAX, `At most ${REASON_MAX} characters`)
    .regex(/^\P{Cc}*$/u, "One line of text"),
  confirm: z.literal("yes", "Tick the box to confirm what suspending the account does"),
});

const PARTNER_KEY = /^p\.([a-z0-9]+)\.[a-z0-9]+$/;

const pageOf = (c: PortalContext) => {
  const n = Number(c.req.query("page") ?? "0");
  return Number.isSafeInteger(n) && n >= 0 && n < 1e6 ? n : 0;
};
const limitsWords = (l: OperatorLimits) =>
  l === "default" ? "the API's defaults" : `rate ${l.rate}/s${l.burst !== undefined ? ` burst ${l.burst}` : ""}`;

/** Records an operator's action on the account it changed, with the operator and their address. */
const audit = (portal: Portal, c: PortalContext, accountId: string, event: AuditEvent, detail: string) =>
  recordAudit(portal.db, accountId, {
    at: portal.clock(),
    event,
    detail: `${detail}${detail ? " " : ""}by ${accountOf(c).email}`,
    address: clientAddress(c),
    actor: accountOf(c).email,
  });

/**
 * An operator's action on account `a` (and its organisation), recorded with the operator and their address, and
 * mailed to `a` and the organisation's owners.
 */
const notice = async (
  portal: Portal,
  c: PortalContext,
  a: Account,
  what: SecurityEvent,
  detail: string,
): Promise<SecurityNotice> => ({
  accountId: a.id,
  recipients: await organisationRecipients(portal.db, a.id, a),
  at: portal.clock(),
  address: clientAddress(c),
  actor: accountOf(c).email,
  detail: `${detail}${detail ? " " : ""}by ${accountOf(c).email}`,
  what,
});

/** Moves the account from status `from` to `to`: false if it was not in `from` (another request moved it first). */
const moveStatus = async (tx: Queries, id: string, from: string, to: string) =>
  (await tx.run("UPDATE accounts SET status = ? WHERE id = ? AND status = ?", [to, id, from])) > 0;

/** An account's page: its keys, their use and its trail. */
const showAccount = async (
  portal: Portal,
  c: PortalContext,
  a: Account,
  status: 200 | 400 | 404,
  state: OperatorForms = {},
) => {
  const keys = await listPartnerKeys(portal.db, portal.keysFile, a.id, portal.clock());
  const use = await keysUse(portal.db, keys, portal.clock());
  const trail = await listAudit(portal.db, a.id);
  const team = { members: await listMembers(portal.db, a.id), memberOf: await listMemberships(portal.db, a.id) };
  return render(
    c,
    portal,
    status,
    a.email,
    operatorAccountPage(pageContext(c, portal), a, keys, use, trail, team, state),
  );
};

/** The page of the keys `npm run keys` made. */
const showOperatorKeys = async (portal: Portal, c: PortalContext, status: 200 | 400, state: OperatorForms = {}) =>
  render(
    c,
    portal,
    status,
    "Operator keys",
    operatorKeysPage(pageContext(c, portal), await listOperatorKeys(portal.db, portal.keysFile, portal.clock()), state),
  );

/** The account in the path, or null. */
const target = async (portal: Portal, c: PortalContext) => {
  const id = c.req.param("id") ?? "";
  return /^[a-z0-9]{1,40}$/.test(id) ? findAccount(portal.db, id) : null;
};

/** Redirects to `path`, which says what was done. */
const done = (c: PortalContext, path: string, what: keyof typeof DONE) => c.redirect(`${path}?done=${what}`, 303);

/** Adds the operator pages' routes to `app`. */
export function registerOperatorRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  app.use("/admin", requireOperator);
  app.use("/admin/*", requireOperator);
  app.get("/admin", (c) => c.redirect("/admin/accounts", 303));
  registerAccountList(app, portal);
  registerAccountPage(app, portal);
  registerSuspension(app, portal);
  registerLimits(app, portal);
  registerOperatorKeys(app, portal);
  registerAuditPage(app, portal);
}

/** The accounts, by email or busiest first (`?order=24h` or `30d`: by all their keys' requests in that span). */
function registerAccountList(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/admin/accounts", async (c) => {
    const n = pageOf(c);
    const order = c.req.query("order");
    const busiest = order === "24h" || order === "30d" ? order : null;
    const span: TrafficSpan = busiest ?? "30d"; // from the days: cheap at any traffic
    const { step, from, to } = trafficWindow(span, portal.clock());
    let accounts: Account[];
    let requests: Map<string, number>;
    if (busiest) {
      const traffic = await accountsByTraffic(portal.db, step, from, to, PAGE + 1, n * PAGE);
      accounts = await findAccounts(
        portal.db,
        traffic.map((t) => t.accountId),
      );
      requests = new Map(traffic.map((t) => [t.accountId, t.requests]));
    } else {
      accounts = await listAccounts(portal.db, PAGE + 1, n * PAGE);
      requests = await requestsOfAccounts(
        portal.db,
        accounts.slice(0, PAGE).map((a) => a.id),
        step,
        from,
        to,
      );
    }
    const shown = accounts.slice(0, PAGE);
    const keys = await keysOfAccounts(portal.db, portal.keysFile, shown, portal.clock());
    const list = shown.map((account) => ({
      account,
      keys: keys.get(account.id) ?? [],
      requests: requests.get(account.id) ?? 0,
    }));
    return render(
      c,
      portal,
      200,
      "Accounts",
      accountsPage(list, { n, more: accounts.length > PAGE }, { busiest, span }),
    );
  });
}

/** An account's page, and the approval of an account awaiting it (the partner is mailed). */
function registerAccountPage(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/admin/accounts/:id", async (c) => {
    const a = await target(portal, c);
    if (!a) return c.notFound();
    return showAccount(portal, c, a, 200, { message: DONE[c.req.query("done") ?? ""] });
  });

  app.post("/admin/accounts/:id/approve", async (c) => {
    const a = await target(portal, c);
    if (!a || a.status !== "pending") return c.notFound();
    // The operator's note, if any: one line of at most REASON_MAX characters (control characters become spaces).
    const note = (await fieldOf(c, "reason"))
      .replace(/\p{Cc}/gu, " ")
      .trim()
      .slice(0, REASON_MAX);
    const detail = note ? `note: "${note}"` : "";
    // From pending only: of two approvals sent at once, one changes the account and mails the partner.
    await recordSecurityEvent(
      portal,
      await notice(portal, c, a, { event: "operator.approved", reason: note }, detail),
      (tx) => moveStatus(tx, a.id, "pending", "active"),
    );
    return done(c, `/admin/accounts/${a.id}`, "approved");
  });
}

/** Suspending an account (with a reason and a confirmation; the partner is mailed the reason), and reinstating it. */
function registerSuspension(app: Hono<PortalEnv>, portal: Portal): void {
  app.post("/admin/accounts/:id/suspend", async (c) => {
    const a = await target(portal, c);
    if (!a || a.status !== "active") return c.notFound();
    if (a.id === accountOf(c).id)
      return showAccount(portal, c, a, 400, { message: "You cannot suspend your own account: ask another operator." });
    const body = await formOf(c);
    const form = parseForm(SuspendSchema, body);
    if (!form.ok) {
      const reason = typeof body.reason === "string" ? body.reason.slice(0, REASON_MAX) : "";
      return showAccount(portal, c, a, 400, { form: "suspend", errors: form.errors, reason });
    }
    const { reason } = form.data;
    // The keys file first: once it is written the API refuses the keys, whatever happens to the database after.
    const keys = await setAccountSuspended(portal.keysFile, a.id, true, portal.clock());
    const detail = `${keys} key${keys === 1 ? "" : "s"} refused; reason: "${reason}"`;
    // From active only: of two suspensions sent at once, one changes the account and mails the partner.
    await recordSecurityEvent(
      portal,
      await notice(portal, c, a, { event: "operator.suspended", reason }, detail),
      (tx) => moveStatus(tx, a.id, "active", "suspended"),
    );
    await endAllSessions(portal.db, a.id);
    return done(c, `/admin/accounts/${a.id}`, "suspended");
  });

  app.post("/admin/accounts/:id/reinstate", async (c) => {
    const a = await target(portal, c);
    if (!a || a.status !== "suspended") return c.notFound();
    const keys = await setAccountSuspended(portal.keysFile, a.id, false, portal.clock());
    await updateAccount(portal.db, a.id, { status: "active" });
    await audit(portal, c, a.id, "operator.reinstated", `${keys} key${keys === 1 ? "" : "s"} accepted again`);
    return done(c, `/admin/accounts/${a.id}`, "reinstated");
  });
}

/** An account's rate and burst (on all its keys), and one key's. */
function registerLimits(app: Hono<PortalEnv>, portal: Portal): void {
  app.post("/admin/accounts/:id/limits", async (c) => {
    const a = await target(portal, c);
    if (!a) return c.notFound();
    const form = parseForm(LimitsSchema, await formOf(c));
    if (!form.ok) return showAccount(portal, c, a, 400, { form: "account", errors: form.errors });
    const limits: OperatorLimits = form.data.action === "default" ? "default" : form.data;
    const keys = await setAccountKeyLimits(portal.keysFile, a.id, limits, portal.clock());
    await updateAccount(portal.db, a.id, {
      rate: limits === "default" ? null : limits.rate,
      burst: limits === "default" ? null : (limits.burst ?? null),
    });
    const detail = `${limitsWords(limits)} on ${keys} key${keys === 1 ? "" : "s"}`;
    await audit(portal, c, a.id, "operator.account_limits", detail);
    return done(c, `/admin/accounts/${a.id}`, "limits");
  });

  app.post("/admin/keys/:name/limits", async (c) => {
    const name = c.req.param("name");
    if (!KEY_NAME.test(name)) return c.notFound();
    const ownerId = PARTNER_KEY.exec(name)?.[1];
    const owner = ownerId ? await findAccount(portal.db, ownerId) : null;
    const form = parseForm(LimitsSchema, await formOf(c));
    const state = { form: `k-${name}`, errors: form.ok ? {} : form.errors };
    if (!form.ok) return owner ? showAccount(portal, c, owner, 400, state) : showOperatorKeys(portal, c, 400, state);
    const limits: OperatorLimits = form.data.action === "default" ? "default" : form.data;
    try {
      await setOneKeyLimits(portal.keysFile, name, limits, portal.clock());
    } catch (err) {
      if (err instanceof KeyInputError) return c.notFound();
      throw err;
    }
    await audit(portal, c, owner?.id ?? accountOf(c).id, "operator.key_limits", `"${name}": ${limitsWords(limits)}`);
    return done(c, owner ? `/admin/accounts/${owner.id}` : "/admin/operator-keys", "limits");
  });
}

/** The page of the keys `npm run keys` made. */
function registerOperatorKeys(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/admin/operator-keys", (c) =>
    showOperatorKeys(portal, c, 200, { message: DONE[c.req.query("done") ?? ""] }),
  );
}

/** Every account's trail, newest first, a page at a time. */
function registerAuditPage(app: Hono<PortalEnv>, portal: Portal): void {
  app.get("/admin/audit", async (c) => {
    const n = pageOf(c);
    const entries = await listAllAudit(portal.db, PAGE + 1, n * PAGE);
    return render(
      c,
      portal,
      200,
      "Activity of every account",
      auditPage(entries.slice(0, PAGE), { n, more: entries.length > PAGE }),
    );
  });
}
