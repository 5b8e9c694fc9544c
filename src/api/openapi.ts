// The OpenAPI 3.1 document of the API, made from the response schemas (schemas.ts, through zod's own toJSONSchema,
// whose draft 2020-12 is OpenAPI 3.1's dialect), the parameter tables (parameters.ts) and the guide (guide.ts).
import { z } from "zod";
import { STORES } from "../catalog/schema.ts";
import type { Examples } from "./examples.ts";
import { renderGuide } from "./guide.ts";
import { COMMON_PARAMETERS, SEARCH_PARAMETERS } from "./parameters.ts";
import type { QueryParameter } from "./parameters.ts";
import { RESPONSE_SCHEMAS } from "./schemas.ts";
import { documentResponse, errorResponses, HEADERS, ok, ref } from "./responses.ts";
import type { ErrorStatus } from "./responses.ts";

/** The document's paths of its own (no key needed). */
export const OPENAPI_PATH = "/v1/openapi.json";
export const DOCS_PATH = "/docs";

export interface OpenApiOptions {
  /** The API's public base URL, no trailing slash: the document's server and the guide's samples. */
  baseUrl: string;
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

const storeParameter = (example: string) => ({
  name: "store",
  in: "path",
  required: true,
  description: "A store key.",
  schema: { type: "string", enum: [...STORES] },
  example,
});

/** The document for a server at `baseUrl`. */
export function createOpenApiDocument({ baseUrl, examples: ex, maxAge = "300 (`MAX_AGE`)" }: OpenApiOptions): Json {
  const saleList = (active: boolean) =>
    ok(`The ${active ? "active" : "upcoming"} sales, ${active ? "newest first" : "soonest first"}.`, "SaleList", {
      sample: { summary: "Two sales of the sample catalog", value: active ? ex.activeSales : ex.upcomingSales },
    });
  const listDescription = (active: boolean) =>
    active
      ? "Sales between their `begins` and `ends`, by `begins`, newest first (ties by sale key). Each lists its products."
      : "Sales whose `begins` is still to come, by `begins`, soonest first (ties by sale key). Products are not shown before a sale begins.";
  return {
    openapi: "3.1.0",
    info: {
      title: "Flash-sale API",
      version: "1",
      summary: "Sales, products and search of a flash-sale retailer, read-only.",
      description: renderGuide(baseUrl, maxAge),
      license: { name: "Proprietary: for holders of an API key", url: `${baseUrl}${DOCS_PATH}` },
    },
    servers: [{ url: baseUrl, description: "This server" }],
    security: [{ apikey: [] }],
    tags: [
      { name: "Sales", description: "Active and upcoming sales, and each sale." },
      { name: "Products", description: "Products on sale now, their categories and sizes." },
      { name: "Search", description: "Full-text search over the products on sale now." },
      { name: "Reference", description: "This document and its reference page; no key needed." },
    ],
    paths: {
      "/v1/sales/active.json": get(
        "listActiveSales",
        "Sales",
        "Active sales, every store",
        listDescription(true),
        [],
        saleList(true),
      ),
      "/v1/sales/{store}/active.json": get(
        "listStoreActiveSales",
        "Sales",
        "Active sales of one store",
        listDescription(true),
        [storeParameter(ex.store)],
        saleList(true),
        { notFound: true },
      ),
      "/v1/sales/upcoming.json": get(
        "listUpcomingSales",
        "Sales",
        "Upcoming sales, every store",
        listDescription(false),
        [],
        saleList(false),
      ),
      "/v1/sales/{store}/upcoming.json": get(
        "listStoreUpcomingSales",
        "Sales",
        "Upcoming sales of one store",
        listDescription(false),
        [storeParameter(ex.store)],
        saleList(false),
        { notFound: true },
      ),
      "/v1/sales/{store}/{sale_key}/detail.json": get(
        "getSale",
        "Sales",
        "One sale",
        "A sale, upcoming or active (with its products once active); a 404 once it has ended, and for a sale key the store does not have.",
        [
          storeParameter(ex.store),
          {
            name: "sale_key",
            in: "path",
            required: true,
            description: "The sale's key, unique within its store.",
            schema: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,63}$" },
            example: ex.activeSaleKey,
          },
        ],
        ok("The sale.", "Sale", {
          active: { summary: "An active sale (two of its products shown)", value: ex.activeSale },
          upcoming: { summary: "An upcoming sale: no products yet", value: ex.upcomingSale },
        }),
        { notFound: true },
      ),
      "/v1/products/{product_id}/detail.json": get(
        "getProduct",
        "Products",
        "One product",
        "A product while a sale that lists it is active; a 404 otherwise (products of upcoming sales are not shown).",
        [
          {
            name: "product_id",
            in: "path",
            required: true,
            description: "The product's ID.",
            schema: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
            example: ex.productId,
          },
        ],
        ok("The product.", "Product", { sample: { summary: "A product of the sample catalog", value: ex.product } }),
        { notFound: true },
      ),
      "/v1/products/categories.json": get(
        "listCategories",
        "Products",
        "Categories on sale now",
        "The distinct categories of the products on sale now, sorted.",
        [],
        ok("The categories.", "Categories", {
          sample: { summary: "Six categories of the sample", value: ex.categories },
        }),
      ),
      "/v1/products/sizes.json": get(
        "listSizes",
        "Products",
        "Size keys on sale now",
        "The sizes of the SKUs on sale now, by size group name and label: the keys the search's `size` takes.",
        [],
        ok("The size keys.", "Sizes", { sample: { summary: "Two size groups of the sample", value: ex.sizes } }),
      ),
      "/v1/products": get(
        "searchProducts",
        "Search",
        "Search the products on sale now",
        "Products on sale now whose name and description hold every word of `q`, most relevant first, narrowed by the filters; one page of `rows` from `start`.",
        SEARCH_PARAMETERS.map((p) => ref("parameters", `search.${p.name}`)),
        ok("A page of products.", "SearchResult", { sample: { summary: "One product found", value: ex.searchResult } }),
      ),
      [OPENAPI_PATH]: get(
        "getOpenApiDocument",
        "Reference",
        "This OpenAPI document",
        "The OpenAPI 3.1 document of the API. No key needed; CORS open.",
        [],
        documentResponse("application/json", "The document.", { type: "object" }),
        { keyless: true },
      ),
      [DOCS_PATH]: get(
        "getReferencePage",
        "Reference",
        "The reference page",
        "This document as one self-contained HTML page that loads nothing from any other host. No key needed.",
        [],
        documentResponse("text/html", "The page.", { type: "string" }),
        { keyless: true },
      ),
    },
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        apikey: {
          type: "apiKey",
          in: "query",
          name: "apikey",
          description:
            "Your API key: 32 letters and digits (`^[A-Za-z0-9]{32}$`), in the query of every /v1/ request. Missing: 401 `api_key_missing`; wrong, revoked or expired: 401 `api_key_invalid`.",
        },
      },
      parameters: Object.fromEntries([
        ...COMMON_PARAMETERS.map((p): [string, Json] => [p.name, queryParameter(p)]),
        ...SEARCH_PARAMETERS.map((p): [string, Json] => [`search.${p.name}`, queryParameter(p)]),
      ]),
      headers: HEADERS,
      responses: errorResponses(),
    },
  };
}
