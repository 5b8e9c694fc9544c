// Every API response a test receives, checked against the response schemas (src/api/schemas.ts): a body that drifts
// from its schema fails the test that received it, whatever that test checks field by field.
import type { z } from "zod";
import { bodySchemaOf, ProblemSchema } from "../../src/api/schemas.ts";

const JSONP = /^\/\*\*\/[A-Za-z_$][A-Za-z0-9_$.]*\(([\s\S]*)\);$/;

/** The schema a body must match: a problem for any error (or a JSONP error), else the path's 200 body; null when none applies. */
function schemaFor(path: string, status: number, value: unknown): z.ZodType | null {
  const problem = typeof value === "object" && value !== null && "code" in value && "type" in value;
  if (status >= 400 || problem) return ProblemSchema;
  return status === 200 ? bodySchemaOf(path) : null;
}

/**
 * Checks the body of `res` (the response to a request for `url`) against its schema, reading a clone so the caller
 * can still read it; throws naming the path and the first mismatches. Responses without a JSON body (HEAD, 304,
 * documents, health and metrics) pass as they are.
 */
export async function checkBody(url: string, res: Response, method = "GET"): Promise<void> {
  if (method === "HEAD" || res.status === 304) return;
  const type = res.headers.get("content-type") ?? "";
  const path = new URL(url, "http://x").pathname.replace(/\/{2,}/g, "/");
  if (!path.startsWith("/v1/") || path === "/v1/openapi.json") return;
  const text = await res.clone().text();
  let json: string;
  if (type.startsWith("application/javascript")) {
    const m = JSONP.exec(text);
    if (!m) throw new Error(`${path}: a JSONP body that is not /**/name(...);`);
    json = m[1]!;
  } else if (type.startsWith("application/json") || type.startsWith("application/problem+json")) json = text;
  else return;
  const value = JSON.parse(json) as unknown;
  const schema = schemaFor(path, res.status, value);
  if (!schema) return;
  const result = schema.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".")}: ${i.message}`)
      .join("; ");
    throw new Error(`${path} (${res.status}): body does not match its schema: ${issues}`);
  }
}

/** fetch, with the body checked by checkBody. */
export async function checkedFetch(url: string, init?: RequestInit): Promise<Response> {
  const res = await fetch(url, init);
  await checkBody(url, res, init?.method);
  return res;
}
