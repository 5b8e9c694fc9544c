// The console's routes: GET /console (anyone may try a request; a signed-in partner also picks among their keys'
// names), its script and stylesheet, and the Content-Security-Policy source that lets that page alone reach the API.
// The form is made from the same OpenAPI document the API serves (src/api/openapi.ts), made once, when first asked.
import type { Context, Hono } from "hono";
import { createOpenApiDocument } from "../api/openapi.ts";
import { sampleExamples } from "../generate/sample-examples.ts";
import { CONSOLE_CSS, CONSOLE_JS } from "./console-static.ts";
import { consoleOperations } from "./console-operations.ts";
import type { ConsoleOperation } from "./console-operations.ts";
import type { Portal, PortalEnv } from "./context.ts";
import { render } from "./context.ts";
import { listPartnerKeys } from "./partner-keys.ts";
import { consolePage } from "./views/console-page.ts";
import type { KeyName, Prepared } from "./views/console-page.ts";

const CONSOLE_PATH = "/console";

/**
 * For the portal's Content-Security-Policy (connect-src and form-action): the API's origin on the console's page,
 * which sends requests there (by fetch, or by its form without script); 'self' again, so nothing more, on every other.
 */
export const consoleSource =
  (apiUrl: string) =>
  (c: Context): string =>
    c.req.path === CONSOLE_PATH ? new URL(apiUrl).origin : "'self'";

/** The request the form's values make, for sending without script: `{name}`s filled in, empty values left out. */
function prepare(o: ConsoleOperation, apiUrl: string, values: Record<string, string[]>): Prepared {
  const missing: string[] = [];
  const path = o.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name]?.[0] ?? "";
    if (value === "") missing.push(name);
    return encodeURIComponent(value);
  });
  const query: [string, string][] = [];
  for (const p of o.parameters.filter((p) => p.in === "query")) {
    const given = (values[p.name] ?? []).filter((v) => v !== "");
    if (p.required && given.length === 0) missing.push(p.name);
    for (const v of p.repeatable ? given : given.slice(0, 1)) query.push([p.name, v]);
  }
  return { action: `${apiUrl}${path}`, query, missing };
}

/** Adds the console's routes to `app`. */
export function registerConsoleRoutes(app: Hono<PortalEnv>, portal: Portal): void {
  const apiUrl = portal.apiUrl.replace(/\/+$/, "");
  // Made on the first visit (a few hundred ms: the examples come from the sample snapshot), not with every portal.
  let operations: Promise<ConsoleOperation[]> | undefined;
  const operationsOnce = () =>
    (operations ??= sampleExamples(apiUrl).then((examples) =>
      consoleOperations(createOpenApiDocument({ baseUrl: apiUrl, examples })),
    ));

  app.get("/static/console.js", (c) => c.body(CONSOLE_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));
  app.get("/static/console.css", (c) => c.body(CONSOLE_CSS, 200, { "Content-Type": "text/css; charset=utf-8" }));

  app.get(CONSOLE_PATH, async (c) => {
    const all = await operationsOnce();
    const op = c.req.query("op");
    const chosen = op === undefined ? all[0] : all.find((o) => o.id === op);
    const values = c.req.queries();
    const org = c.get("org");
    const keys: KeyName[] | null = org
      ? (await listPartnerKeys(portal.db, portal.keysFile, org.id, portal.clock()))
          .filter((k) => k.status === "active")
          .map(({ label, first4, last4 }) => ({ label, first4, last4 }))
      : null;
    const view = {
      operations: all,
      chosen,
      values,
      apiUrl,
      keys,
      prepared: chosen && c.req.query("prepare") !== undefined ? prepare(chosen, apiUrl, values) : undefined,
    };
    if (!chosen) {
      const problem = "There is no such operation: pick one of the list.";
      return render(c, portal, 404, "API console", consolePage({ ...view, problem }));
    }
    return render(c, portal, 200, "API console", consolePage(view));
  });
}
