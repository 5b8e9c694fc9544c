// The usage pages' routes: a partner's own keys, one or all (a key ID not of the signed-in account is a 404), and the
// same for any account under /admin (operators only), each as a page with its chart and as a CSV download.
import type { Hono, MiddlewareHandler } from "hono";
import { html } from "hono/html";
import type { Portal, PortalContext, PortalEnv } from "./context.ts";
import { orgOf, render, requireOperator, requireRole } from "./context.ts";
import type { PartnerKey } from "./partner-keys.ts";
import { listPartnerKeys } from "./partner-keys.ts";
import { findAccount } from "./store/accounts.ts";
import { keysUse, parseSpan, readUsage, readUsageRows } from "./usage-reads.ts";
import type { SpanName } from "./usage-reads.ts";
import type { Html } from "./views/layout.ts";
import { renderUsageCsv } from "./views/usage-csv.ts";
import { usagePage } from "./views/usage-pages.ts";

const ACCOUNT_ID = /^[a-z0-9]{1,40}$/;
const noSuchSpan = html`<p>There is no such span: pick 48h, 30d or 90d.</p>`;

/** What a usage route found to show. */
interface Found {
  /** The keys whose figures are added up: one, or every key of an account (revoked ones too: their past use counts). */
  keys: PartnerKey[];
  /** The one key of a key's page (its last use is shown). */
  key?: PartnerKey;
  /** Whose figures these are, in words. */
  words: string;
  back: { href: string; text: string };
  /** The CSV's file name (before the span). */
  file: string;
}

/** Adds the usage pages' routes to `app`. */
export function registerUsageRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const keysOf = (accountId: string) => listPartnerKeys(portal.db, portal.keysFile, accountId, portal.clock());
  const allKeys = async (accountId: string, words: string, back: Found["back"], file: string): Promise<Found> => ({
    keys: await keysOf(accountId),
    words,
    back,
    file,
  });
  const oneKey = async (accountId: string, keyId: string, back: Found["back"]): Promise<Found | null> => {
    const key = (await keysOf(accountId)).find((k) => k.id === keyId);
    if (!key) return null;
    const words = `the key “${key.label}” (${key.first4}…${key.last4})`;
    return { keys: [key], key, words, back, file: `usage-key-${key.id}` };
  };

  const answer = async (c: PortalContext, found: Found, path: string, span: SpanName, csv: boolean) => {
    const now = portal.clock();
    const names = found.keys.map((k) => k.name);
    if (csv) {
      // A label is the key's name on the CSV (its first and last 4 characters too when two keys share a label).
      const uses = new Map<string, number>();
      for (const k of found.keys) uses.set(k.label, (uses.get(k.label) ?? 0) + 1);
      const labels = new Map(
        found.keys.map((k) => [k.name, uses.get(k.label)! > 1 ? `${k.label} (${k.first4}…${k.last4})` : k.label]),
      );
      const rows = await readUsageRows(portal.db, names, span, now);
      return c.body(
        renderUsageCsv(rows, (name) => labels.get(name) ?? name),
        200,
        {
          "Content-Type": "text/csv; charset=utf-8",
          "Content-Disposition": `attachment; filename="${found.file}-${span}.csv"`,
        },
      );
    }
    const [report, uses] = await Promise.all([
      readUsage(portal.db, names, span, now),
      keysUse(portal.db, found.keys, now),
    ]);
    const body = usagePage(report, {
      words: found.words,
      path,
      back: found.back,
      keys: found.keys,
      uses,
      ...(found.key ? { key: found.key } : {}),
    });
    return render(c, portal, 200, "Usage", body);
  };
  /**
   * Serves `route` (the page) and `route.csv` to those `guard` lets through: what `find` finds for the request (and
   * the page's path), or a 404 saying `missing`.
   */
  const serve = (
    route: string,
    guard: MiddlewareHandler<PortalEnv>,
    missing: Html,
    find: (c: PortalContext) => Promise<{ found: Found | null; path: string }>,
  ) => {
    const handle = async (c: PortalContext, csv: boolean) => {
      const span = parseSpan(c.req.query("span"));
      if (!span) return render(c, portal, 400, "Usage", noSuchSpan);
      const { found, path } = await find(c);
      if (!found) return render(c, portal, 404, "Not found", missing);
      return answer(c, found, path, span, csv);
    };
    app.get(route, guard, (c) => handle(c, false));
    app.get(`${route}.csv`, guard, (c) => handle(c, true));
  };

  // A viewer has no keys page: their way back is to the usage of every key.
  const mine = (c: PortalContext) =>
    orgOf(c).role === "viewer"
      ? { href: "/usage", text: "Usage of every key" }
      : { href: "/keys", text: "Back to your keys" };
  const noSuchKey = html`<p>You have no such key. <a href="/usage">Usage of your keys</a>.</p>`;
  const member = requireRole(portal, "owner", "developer", "viewer");
  serve("/usage", member, noSuchKey, async (c) => ({
    found: await allKeys(orgOf(c).id, "every key of your account", mine(c), "usage-all-keys"),
    path: "/usage",
  }));
  serve("/keys/:id/usage", member, noSuchKey, async (c) => {
    const id = c.req.param("id") ?? "";
    return { found: await oneKey(orgOf(c).id, id, mine(c)), path: `/keys/${id}/usage` };
  });

  // The operator's: requireOperator answers anyone else with a 404 (they do not learn the pages exist).
  const noSuchAccount = html`<p>There is no such account or key. <a href="/admin/accounts">Accounts</a>.</p>`;
  const target = async (c: PortalContext) => {
    const id = c.req.param("id") ?? "";
    return ACCOUNT_ID.test(id) ? findAccount(portal.db, id) : null;
  };
  const theirs = (id: string) => ({ href: `/admin/accounts/${id}`, text: "Back to the account" });
  serve("/admin/accounts/:id/usage", requireOperator, noSuchAccount, async (c) => {
    const a = await target(c);
    const path = `/admin/accounts/${a?.id}/usage`;
    return { found: a && (await allKeys(a.id, `every key of ${a.email}`, theirs(a.id), `usage-${a.id}`)), path };
  });
  serve("/admin/accounts/:id/keys/:key/usage", requireOperator, noSuchAccount, async (c) => {
    const a = await target(c);
    const key = c.req.param("key") ?? "";
    const path = `/admin/accounts/${a?.id}/keys/${key}/usage`;
    return { found: a && (await oneKey(a.id, key, theirs(a.id))), path };
  });
}
