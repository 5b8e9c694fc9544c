// The console's view of the OpenAPI document (src/api/openapi.ts): every GET operation under /v1/ with its path and
// query parameters, each reduced to what a form field needs (a choice of values, text or an integer; repeatable or
// not; required or not). Header parameters (the event stream's Last-Event-ID) are left to a real client.

type Json = Record<string, unknown>;

/** One parameter, as the console's form shows it. */
export interface ConsoleParameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  /** The document's description (Markdown: `code` spans). */
  description: string;
  /** `choice`: one of `values`; `integer`: digits, within `minimum`..`maximum` when given; `text`: anything. */
  kind: "choice" | "integer" | "text";
  values: readonly string[];
  repeatable: boolean;
  /** What the API takes when it is not sent, as text. */
  default?: string;
  /** The document's example of one value, as text. */
  example?: string;
  minimum?: number;
  maximum?: number;
}

/** One GET operation under /v1/. */
export interface ConsoleOperation {
  /** The document's operationId, the `op` of /console?op=... */
  id: string;
  /** OpenAPI's template: `{name}` for a path parameter. */
  path: string;
  tag: string;
  summary: string;
  description: string;
  /** Whether it takes a key (the document's own operations do not). */
  keyed: boolean;
  /** Path parameters first, in the order of the path, then query parameters in the document's order. */
  parameters: ConsoleParameter[];
}

const text = (v: unknown): string | undefined =>
  typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : undefined;

/** `#/components/parameters/x` resolved in `document`; anything else as it is. */
function resolve(document: Json, p: Json): Json {
  const ref = p.$ref;
  if (typeof ref !== "string") return p;
  const found = ref
    .replace(/^#\//, "")
    .split("/")
    .reduce<unknown>((at, part) => (at as Json | undefined)?.[part], document);
  if (!found || typeof found !== "object") throw new Error(`console: the document has no ${ref}`);
  return found as Json;
}

/** A parameter of the document as the form shows it; null for a header (or cookie) parameter. */
function parameterOf(p: Json): ConsoleParameter | null {
  if (p.in !== "path" && p.in !== "query") return null;
  const schema = (p.schema ?? {}) as Json;
  const repeatable = schema.type === "array";
  const one = (repeatable ? (schema.items ?? {}) : schema) as Json;
  const values = Array.isArray(one.enum) ? one.enum.map((v) => String(v)) : [];
  const kind = values.length > 0 ? "choice" : one.type === "integer" ? "integer" : "text";
  const example: unknown = Array.isArray(p.example) ? (p.example as unknown[])[0] : p.example;
  const parameter: ConsoleParameter = {
    name: String(p.name),
    in: p.in,
    required: p.required === true,
    description: text(p.description) ?? "",
    kind,
    values,
    repeatable,
  };
  const fallback = text(one.default);
  if (fallback !== undefined) parameter.default = fallback;
  const exampleText = text(example);
  if (exampleText !== undefined) parameter.example = exampleText;
  if (typeof one.minimum === "number") parameter.minimum = one.minimum;
  if (typeof one.maximum === "number") parameter.maximum = one.maximum;
  return parameter;
}

/** The GET operations under /v1/ of `document`, in its order. */
export function consoleOperations(document: Json): ConsoleOperation[] {
  const paths = (document.paths ?? {}) as Record<string, Json>;
  const operations: ConsoleOperation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    const get = item.get as Json | undefined;
    if (!path.startsWith("/v1/") || !get) continue;
    const all = ((get.parameters ?? []) as Json[])
      .map((p) => parameterOf(resolve(document, p)))
      .filter((p) => p !== null);
    const at = (p: ConsoleParameter) => path.indexOf(`{${p.name}}`);
    const inPath = all.filter((p) => p.in === "path").sort((a, b) => at(a) - at(b));
    const security = get.security as unknown[] | undefined;
    operations.push({
      id: String(get.operationId),
      path,
      tag: String((get.tags as string[] | undefined)?.[0] ?? ""),
      summary: text(get.summary) ?? "",
      description: text(get.description) ?? "",
      keyed: security === undefined || security.length > 0,
      parameters: [...inPath, ...all.filter((p) => p.in === "query")],
    });
  }
  return operations;
}
