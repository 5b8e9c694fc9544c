// The OpenAPI 3.1 document of the API, made from the response schemas (schemas.ts, through zod's own toJSONSchema,
// whose draft 2020-12 is OpenAPI 3.1's dialect), the parameter tables (parameters.ts) and the guide (guide.ts).
import { z } from "zod";
import { ENDPOINTS } from "./endpoints.ts";
import { endpointById } from "./routing.ts";
import type { Endpoint, EndpointDoc } from "./endpoints.ts";
import type { Examples } from "./examples.ts";
import { renderGuide } from "./guide.ts";
import { COMMON_PARAMETERS, SEARCH_PARAMETERS } from "./parameters.ts";
import type { QueryParameter } from "./parameters.ts";
import { RESPONSE_SCHEMAS } from "./schemas.ts";
import { documentResponse, errorResponses, HEADERS, ok, ref } from "./responses.ts";
import type { ErrorStatus } from "./responses.ts";

/** The reference page's path, which the document names as its licence's. */
const DOCS_PATH = endpointById("getReferencePage").path;

export interface OpenApiOptions {
  /** The API's public base URL, no trailing slash: the document's server and the guide's samples. */
  baseUrl: string;
  /** The developer portal's public URL, no trailing slash: where the guide sends partners for a key. Default none. */
  portalUrl?: string | undefined;
  /** Example bodies (examples.ts). */
  examples: Examples;
  /** The longest max-age the server sends, seconds, as the guide states it. Default "300 (MAX_AGE)". */
  maxAge?: string;
}

type Json = Record<string, unknown>;

/** The response schemas as OpenAPI components (draft 2020-12 JSON Schema, which OpenAPI 3.1 uses). */
function componentSchemas(): Json {
  // Each schema of schemas.ts names itself with .meta({ id }), which puts it in zod's global registry.
  for (const schema of Object.values(RESPONSE_SCHEMAS))
    if (!z.globalRegistry.has(schema)) throw new Error("unnamed schema");
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
  });
  const out: Json = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema as Json;
    out[id] = rest;
  }
  return out;
}

/** A query parameter as the document has it: a repeatable one is an exploded array. */
function queryParameter(p: QueryParameter): Json {
  const one = { ...(z.toJSONSchema(p.schema, { io: "input" }) as Json) };
  delete one.$schema;
  const schema = p.repeatable ? { type: "array", items: one, maxItems: 32 } : one;
  const example = p.example === undefined ? {} : { example: p.repeatable ? [p.example] : p.example };
  return {
    name: p.name,
    in: "query",
    required: p.required ?? false,
    description: p.description,
    schema,
    ...(p.repeatable ? { style: "form", explode: true } : {}),
    ...example,
  };
}

/** What every way of sending the key has in common, for each scheme's description. */
const KEY_TERMS =
  "32 letters and digits (`^[A-Za-z0-9]{32}$`). Missing: 401 `api_key_missing`; wrong, revoked or expired: 401 `api_key_invalid`; of a suspended account: 401 `api_key_suspended`. Two different keys in one request (say in the query and in a header) are a 400.";

/** The three ways the API takes a key: any one of them (the document's `security` lists each as an alternative). */
const KEY_SCHEMES = {
  apiKeyHeader: {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: `Your API key in the \`X-Api-Key\` header: ${KEY_TERMS}`,
  },
  bearer: {
    type: "http",
    scheme: "bearer",
    description: `Your API key as \`Authorization: Bearer <key>\`: ${KEY_TERMS}`,
  },
  apikey: {
    type: "apiKey",
    in: "query",
    name: "apikey",
    description: `Your API key in the \`apikey\` query parameter (the one way \`EventSource\` and a JSONP script can send it): ${KEY_TERMS}`,
  },
} as const;

const KEYED_ERRORS: ErrorStatus[] = [400, 401, 405, 408, 414, 429, 431, 500, 503];

/** One GET operation. */
function get(
  operationId: string,
  tag: string,
  summary: string,
  description: string,
  parameters: Json[],
  response: Json,
  options: { notFound?: boolean; keyless?: boolean } = {},
): Json {
  const statuses = options.keyless
    ? KEYED_ERRORS.filter((s) => s !== 401 && s !== 429)
    : options.notFound
      ? [...KEYED_ERRORS, 404 as const].sort((a, b) => a - b)
      : KEYED_ERRORS;
  return {
    get: {
      operationId,
      tags: [tag],
      summary,
      description,
      ...(options.keyless ? { security: [] } : {}),
      parameters: options.keyless
        ? parameters
        : [...parameters, ...COMMON_PARAMETERS.map((p) => ref("parameters", p.name))],
      responses: {
        "200": response,
        "304": ref("responses", "NotModified"),
        ...Object.fromEntries(statuses.map((s) => [String(s), ref("responses", String(s))])),
      },
    },
  };
}

/** An endpoint's GET operation, from its entry in the endpoint table. */
function operation(e: Endpoint, doc: EndpointDoc, ex: Examples): Json {
  const pathParameters = Object.entries(e.params ?? {}).map(([name, p]) => ({
    name,
    in: "path",
    required: true,
    description: p.description,
    schema: p.schema,
    example: ex[p.example],
  }));
  if (doc.document) {
    return get(
      e.id,
      doc.tag,
      doc.summary,
      doc.description,
      pathParameters,
      documentResponse(doc.document.type, doc.response, doc.document.schema),
      {
        keyless: true,
      },
    );
  }
  if (doc.media) {
    return get(
      e.id,
      doc.tag,
      doc.summary,
      doc.description,
      [...pathParameters, ...(doc.query ?? [])],
      documentResponse(doc.media.type, doc.response, doc.media.schema),
      { notFound: e.missing !== undefined },
    );
  }
  const examples = Object.fromEntries(
    Object.entries(doc.examples ?? {}).map(([name, { summary, value }]) => [name, { summary, value: ex[value] }]),
  );
  const parameters =
    e.answer === "search" ? SEARCH_PARAMETERS.map((p) => ref("parameters", `search.${p.name}`)) : pathParameters;
  return get(e.id, doc.tag, doc.summary, doc.description, parameters, ok(doc.response, e.body!, examples), {
    notFound: e.missing !== undefined,
  });
}

/** The document for a server at `baseUrl`. */
export function createOpenApiDocument({
  baseUrl,
  portalUrl,
  examples: ex,
  maxAge = "300 (`MAX_AGE`)",
}: OpenApiOptions): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Flash-sale API",
      // Redoc heads the page "<title> (<version>)": "v1", as the paths say it.
      version: "v1",
      summary: "Sales, products and search of a flash-sale retailer, read-only.",
      description: renderGuide(baseUrl, maxAge, portalUrl),
      license: { name: "Proprietary: for holders of an API key", url: `${baseUrl}${DOCS_PATH}` },
    },
    servers: [{ url: baseUrl, description: "This server" }],
    // Any one of the three (each entry is an alternative).
    security: Object.keys(KEY_SCHEMES).map((name) => ({ [name]: [] })),
    tags: [
      { name: "Sales", description: "Active and upcoming sales, and each sale." },
      { name: "Products", description: "Products on sale now, their categories and sizes." },
      { name: "Search", description: "Full-text search over the products on sale now." },
      { name: "Events", description: "Sale events pushed as they happen (Server-Sent Events)." },
      { name: "Reference", description: "This document and its reference page; no key needed." },
    ],
    paths: Object.fromEntries(ENDPOINTS.flatMap((e) => (e.doc ? [[e.path, operation(e, e.doc, ex)]] : []))),
    components: {
      schemas: componentSchemas(),
      securitySchemes: KEY_SCHEMES,
      parameters: Object.fromEntries([
        ...COMMON_PARAMETERS.map((p): [string, Json] => [p.name, queryParameter(p)]),
        ...SEARCH_PARAMETERS.map((p): [string, Json] => [`search.${p.name}`, queryParameter(p)]),
      ]),
      headers: HEADERS,
      responses: errorResponses(),
    },
  };
}
