// The document's responses: the shared headers, the 200s (a JSON body, also as JSONP; the document's own resources)
// and the error responses, each status with the problem codes it answers with.
import { ApiError } from "../errors.ts";
import type { ProblemCode } from "../errors.ts";

/** The statuses of errors, each a component response named by its number. */
export type ErrorStatus = 400 | 401 | 404 | 405 | 408 | 414 | 429 | 431 | 500 | 503;

const int = (description: string, example: number) => ({
  description,
  schema: { type: "integer", minimum: 0 },
  example,
});

/** Response headers, as components. */
export const HEADERS: Record<string, unknown> = {
  ETag: {
    description: "The body's version: send it in `If-None-Match` to get a 304 while it is unchanged.",
    schema: { type: "string" },
    example: '"3f2a9c0e4b1d5a6f7e8d9c0b1a2f3e4d-gz"',
  },
  "Cache-Control": {
    description:
      "`public, max-age=N`: N is at most MAX_AGE (300 s) and never past the instant the response changes. Errors are `no-store`, but for the 404 of a sale or product that exists with no state now (a sale that has ended, a product between sales), which is cached like a 200.",
    schema: { type: "string" },
    example: "public, max-age=300",
  },
  Vary: { description: "`Accept-Encoding`: bodies come in br, gzip or identity.", schema: { type: "string" } },
  "Access-Control-Allow-Origin": { description: "`*`: any origin may call the API.", schema: { type: "string" } },
  "RateLimit-Limit": int("The key's burst: requests it may make at once.", 200),
  "RateLimit-Remaining": int("Requests the key may make now.", 199),
  "RateLimit-Reset": int("Seconds until the key's bucket is full again.", 1),
  "Retry-After": int("Seconds to wait before trying again.", 1),
  Allow: { description: "`GET, HEAD`.", schema: { type: "string" } },
};

/** What each error status means, and the codes (with an example detail) it comes with. */
const ERRORS: Record<ErrorStatus, { description: string; codes: [ProblemCode, string][]; headers?: string[] }> = {
  400: {
    description: "A parameter's value is not allowed, or the request is malformed.",
    codes: [
      ["invalid_parameter", "rows: must be an integer from 1 to 100"],
      ["invalid_request", "the query string has invalid percent-encoding or is not UTF-8"],
    ],
  },
  401: {
    description:
      "No key, or a key that is wrong, revoked or past its grace period (or too many wrong keys from this address: `Retry-After` then says when to try again), or a key of an account the API's operator has suspended (`api_key_suspended`: it works again once the account is reinstated).",
    codes: [
      [
        "api_key_missing",
        "this request needs an API key: the apikey query parameter, an X-Api-Key header or Authorization: Bearer <key>",
      ],
      ["api_key_invalid", "the API key is not valid"],
      [
        "api_key_suspended",
        "apikey belongs to a suspended account: the API's operator suspended it, and its keys are refused until it is reinstated",
      ],
    ],
    headers: ["Retry-After"],
  },
  404: {
    description:
      "No such resource: an unknown store or sale key, a sale that has ended, a product not on sale now. The 404 of a sale or product that exists but has no state now is `public, max-age=N` (capped at the instant it changes, as a 200 is), so a cache absorbs the polling after a sale ends; any other is `no-store`.",
    codes: [["not_found", "this sale has ended"]],
    headers: ["Cache-Control"],
  },
  405: {
    description: "Only GET and HEAD are allowed.",
    codes: [["method_not_allowed", "POST is not allowed; use GET or HEAD"]],
    headers: ["Allow"],
  },
  408: {
    description: "The request was not received in time.",
    codes: [["request_timeout", "the request took too long to arrive"]],
  },
  414: {
    description: "The request target is longer than 4096 bytes.",
    codes: [["uri_too_long", "the request target is longer than 4096 bytes"]],
  },
  429: {
    description: "The key's rate limit is used up: retry after `Retry-After` seconds.",
    codes: [["rate_limited", "this key may make 50 requests a second (bursts of 200); retry after 1 s"]],
    headers: ["Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
  },
  431: {
    description: "The request's header fields are too large.",
    codes: [["headers_too_large", "the request's headers are too large"]],
  },
  500: {
    description: "A fault of the server's.",
    codes: [["internal_error", "the server could not answer this request"]],
  },
  503: {
    description: "No data is loaded yet: retry after `Retry-After` seconds.",
    codes: [["service_unavailable", "no snapshot is loaded yet"]],
    headers: ["Retry-After"],
  },
};

/** The component responses: NotModified, and one per error status with an example of each of its codes. */
export function errorResponses(): Record<string, unknown> {
  const out: Record<string, unknown> = {
    NotModified: {
      description: "Not modified: the `If-None-Match` tag names the current body. No body.",
      headers: {
        ETag: { $ref: "#/components/headers/ETag" },
        "Cache-Control": { $ref: "#/components/headers/Cache-Control" },
      },
    },
  };
  for (const [status, { description, codes, headers = [] }] of Object.entries(ERRORS)) {
    const examples = Object.fromEntries(
      codes.map(([code, detail]) => [
        code,
        { summary: code, value: new ApiError(Number(status), code, detail).toJSON() },
      ]),
    );
    out[status] = {
      description: `${description} Codes: ${codes.map(([c]) => `\`${c}\``).join(", ")}.`,
      headers: Object.fromEntries(headers.map((h) => [h, { $ref: `#/components/headers/${h}` }])),
      content: {
        "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" }, examples },
        "application/javascript": {
          schema: { type: "string", description: "With a valid `callback`: the problem passed to it." },
          example: `/**/showSales(${JSON.stringify(Object.values(examples)[0]!.value)});`,
        },
      },
    };
  }
  return out;
}

/** A reference to a component of the document. */
export const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** The headers of every 200: its ETag, freshness, Vary and CORS. */
function cacheHeaders(): Record<string, unknown> {
  return {
    ETag: ref("headers", "ETag"),
    "Cache-Control": ref("headers", "Cache-Control"),
    Vary: ref("headers", "Vary"),
    "Access-Control-Allow-Origin": ref("headers", "Access-Control-Allow-Origin"),
  };
}

/** A 200 of a JSON body (also as JSONP), with named examples. */
export function ok(
  description: string,
  schema: string,
  examples: Record<string, { summary: string; value: unknown }>,
): Record<string, unknown> {
  const first = Object.values(examples)[0]!.value;
  return {
    description,
    headers: {
      ...cacheHeaders(),
      "RateLimit-Limit": ref("headers", "RateLimit-Limit"),
      "RateLimit-Remaining": ref("headers", "RateLimit-Remaining"),
      "RateLimit-Reset": ref("headers", "RateLimit-Reset"),
    },
    content: {
      "application/json": { schema: ref("schemas", schema), examples },
      "application/javascript": {
        schema: { type: "string", description: `JSONP (with \`callback\`): \`/**/<callback>(<${schema}>);\`` },
        example: `/**/showSales(${JSON.stringify(first)});`,
      },
    },
  };
}

/** A 200 of one of the document's own resources. */
export function documentResponse(
  type: string,
  description: string,
  schema: Record<string, unknown>,
): Record<string, unknown> {
  return {
    description,
    headers: cacheHeaders(),
    content: { [type]: { schema } },
  };
}
