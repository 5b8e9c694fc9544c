// The one API error type, and the one function that turns an error into a problem+json response (RFC 9457).

export type ProblemCode =
  | "api_key_missing"
  | "api_key_invalid"
  | "api_key_suspended"
  | "not_found"
  | "invalid_parameter"
  | "invalid_request"
  | "method_not_allowed"
  | "rate_limited"
  | "uri_too_long"
  | "headers_too_large"
  | "request_timeout"
  | "unauthorized"
  | "service_unavailable"
  | "internal_error";

const TITLES: Record<ProblemCode, string> = {
  api_key_missing: "API key missing",
  api_key_invalid: "API key invalid",
  api_key_suspended: "API key suspended",
  not_found: "Not found",
  invalid_parameter: "Invalid parameter",
  invalid_request: "Invalid request",
  method_not_allowed: "Method not allowed",
  rate_limited: "Too many requests",
  uri_too_long: "URI too long",
  headers_too_large: "Request header fields too large",
  request_timeout: "Request timeout",
  unauthorized: "Unauthorized",
  service_unavailable: "Service unavailable",
  internal_error: "Internal server error",
};

/** Every problem `code` the API sends. */
export const PROBLEM_CODES = Object.keys(TITLES) as [ProblemCode, ...ProblemCode[]];

/** Thrown by request handling; rendered by `renderProblem`. `detail` is shown to the client: never put a key in it. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ProblemCode;
  readonly detail: string;
  readonly headers: Record<string, string>;
  /** Why, when the code alone does not say (metrics count 401s by it): "address_locked_out". Default the code. */
  readonly reason: string;

  constructor(
    status: number,
    code: ProblemCode,
    detail: string,
    headers: Record<string, string> = {},
    reason: string = code,
  ) {
    // No stack trace: an ApiError is an answer, not a fault, and V8's capture of one cost more than the rest of a
    // 401 or a 429 (its place in the code is never logged; unexpected errors keep theirs).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.headers = headers;
    this.reason = reason;
  }

  toJSON(): { type: string; title: string; status: number; detail: string; code: ProblemCode } {
    return {
      type: `urn:flash-sale-api:problem:${this.code}`,
      title: TITLES[this.code],
      status: this.status,
      detail: this.detail,
      code: this.code,
    };
  }
}

export const invalidParameter = (name: string, rule: string) =>
  new ApiError(400, "invalid_parameter", `${name}: ${rule}`);

export const notFound = (detail = "no such resource") => new ApiError(404, "not_found", detail);

/** A log line's account of an error: its name, message and stack (never a request's query string or key). */
export function describeError(err: unknown): { name: string; message: string; stack?: string } {
  if (err instanceof Error) return { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
  return { name: typeof err, message: String(err) };
}

/** An unexpected error, as one log line: never a query string (and so never a key). */
export interface ErrorLog {
  time: string;
  /** "warn": the server goes on as it should (Redis down: limits per process); "error": something failed. */
  level: "error" | "warn";
  event: string;
  method?: string;
  path?: string;
  error: { name: string; message: string; stack?: string };
}

/**
 * The log line of `err` as event `event` (every command's error lines have this one shape), at `at` (epoch ms;
 * default now). `explain` words the message from the error's own (what failed, and what happens meanwhile: the
 * stack is left out then), and `fields` (a request's method and path) go beside it.
 */
export function errorLine(
  level: ErrorLog["level"],
  event: string,
  err: unknown,
  {
    explain,
    at = Date.now(),
    ...fields
  }: { explain?: (message: string) => string; at?: number; method?: string; path?: string } = {},
): ErrorLog {
  const { name, message, stack } = describeError(err);
  const error = explain ? { name, message: explain(message) } : { name, message, ...(stack ? { stack } : {}) };
  return { time: new Date(at).toISOString(), level, event, ...fields, error };
}

/** Anything that is not an ApiError becomes a 500 that says nothing of the internals. */
export function toApiError(err: unknown): ApiError {
  return err instanceof ApiError
    ? err
    : new ApiError(500, "internal_error", "the server could not answer this request");
}

/**
 * An error sent to a JSONP client: a `<script>` cannot read a problem+json body, and a browser does not run a
 * script answered with a 4xx at all, so the problem object is passed to the callback, and with `suppress` (the
 * request's `suppress_response_codes=1`, as Twitter's JSONP API had it) the status is 200; the problem's own
 * `status` still says the real one.
 */
export interface Jsonp {
  callback: string;
  suppress: boolean;
}

/** The status, headers and body of an error response; a JSONP call when `jsonp` is given. */
export function renderProblem(
  error: ApiError,
  jsonp: Jsonp | null = null,
): { status: number; headers: Record<string, string>; body: Buffer } {
  const json = JSON.stringify(error.toJSON());
  const body = Buffer.from(jsonp ? `/**/${jsonp.callback}(${json});` : json);
  return {
    status: jsonp?.suppress ? 200 : error.status,
    headers: {
      "Content-Type": jsonp ? "application/javascript; charset=utf-8" : "application/problem+json",
      "Content-Length": String(body.length),
      "Cache-Control": "no-store",
      "Access-Control-Allow-Origin": "*",
      // A page's script may read every header of an error too (Retry-After, RateLimit-*): made once per rendering.
      "Access-Control-Expose-Headers": "*",
      "X-Content-Type-Options": "nosniff",
      ...error.headers,
    },
    body,
  };
}
