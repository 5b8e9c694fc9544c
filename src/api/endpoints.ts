// The one table of the API's endpoints: path template, route class, how the server answers, response schema and
// documentation. The build (resource paths), the handler (admission, 404 details, documents), the metrics (route
// labels) and the OpenAPI document all read it: a new endpoint is an entry here plus its own code.
import { STORES } from "../catalog/schema.ts";
import type { Examples } from "./examples.ts";

/** Route classes: the label every request is counted under in the metrics, in this order. */
export const ROUTE_CLASSES = [
  "sale_list",
  "sale_detail",
  "product",
  "categories",
  "sizes",
  "search",
  "events",
  "calendar",
  "usage",
  "docs",
  "health",
  "metrics",
  "edge",
  "other",
] as const;
export type RouteClass = (typeof ROUTE_CLASSES)[number];

/**
 * Which responder answers: the server answers an endpoint with src/serve/endpoints/<answer>.ts (its `responder`), so
 * a new kind of endpoint is a row here and a file there. A snapshot resource (its time segments), the search index,
 * the event stream (a long-lived response outside the caching path, src/serve/events/), a calendar rendered from the
 * sale lists in force, the key's own usage, a document of the snapshot, the server's own health and metrics, or a
 * front's key check.
 */
export type Answer =
  "resource" | "search" | "stream" | "calendar" | "usage" | "document" | "health" | "metrics" | "edge";

/**
 * Who may ask: "key", a request with a valid key, counted against its rate (the /v1/ API); "open", anyone, no key
 * (documents, health, metrics with its own token); "proxies", the proxies of TRUST_PROXY only (a 404 to any other
 * peer, as if there were no such path).
 */
type Access = "key" | "open" | "proxies";

/** Names of the example bodies (src/api/examples.ts) an endpoint's documentation shows. */
type ExampleName = Exclude<keyof Examples, PathParameter["example"] | "upcomingSaleKey">;

/** A path parameter: its pattern (a regular expression source, no anchors), and how the document describes it. */
interface PathParameter {
  pattern: string;
  description: string;
  /** Its JSON Schema in the document. */
  schema: Record<string, unknown>;
  /** Which example path parameter (src/api/examples.ts) the document shows. */
  example: "store" | "activeSaleKey" | "productId";
}

/** What the OpenAPI document says of an endpoint. */
export interface EndpointDoc {
  tag: "Sales" | "Products" | "Search" | "Events" | "Usage" | "Reference";
  summary: string;
  description: string;
  /** The 200 response's description, and its examples (name -> summary and example). */
  response: string;
  examples?: Record<string, { summary: string; value: ExampleName }>;
  /** For a keyless document: its media type and JSON Schema in the document. */
  document?: { type: string; schema: Record<string, unknown> };
  /** For a keyed endpoint whose 200 is not JSON (the event stream, the calendar): its media type and schema. */
  media?: { type: string; schema: Record<string, unknown> };
  /** Query parameters of its own, as the document has them (besides the key, `affid` and `callback`). */
  query?: Record<string, unknown>[];
}

/** One endpoint. */
export interface Endpoint {
  /** The OpenAPI operation ID, and the name the code refers to it by. */
  id: string;
  /** The path, `{name}` for a path parameter (OpenAPI's template). */
  path: string;
  route: RouteClass;
  answer: Answer;
  /** Who may ask. Default "key". */
  access?: Access;
  /** false: a keyed request takes no token of its key's rate (it only reads what is left). Default true. */
  rateLimited?: false;
  /** Its path parameters, by name. */
  params?: Readonly<Record<string, PathParameter>>;
  /** The schema (src/api/schemas.ts, RESPONSE_SCHEMAS) of a 200 body; none for documents and the server's own. */
  body?: "SaleList" | "Sale" | "Product" | "Categories" | "Sizes" | "SearchResult" | "Usage";
  /** For a resource with path parameters: the 404's detail when the snapshot has no such path. */
  missing?: (params: Readonly<Record<string, string>>) => string;
  /** For a document: the snapshot file it is kept in, and its media type. */
  file?: { name: string; type: string };
  /** Absent: not in the document (the server's own health and metrics, and the fronts' key check). */
  doc?: EndpointDoc;
}

const STORE: PathParameter = {
  pattern: "[^/]+",
  description: "A store key.",
  schema: { type: "string", enum: [...STORES] },
  example: "store",
};

/** The 404 detail of a path under a store that the snapshot lacks: the store is unknown, or else `known`. */
const inStore =
  (known: string) =>
  (params: Readonly<Record<string, string>>): string =>
    (STORES as readonly string[]).includes(params.store ?? "")
      ? known
      : `unknown store "${params.store}": use one of ${STORES.join(", ")}`;

const ACTIVE =
  "Sales between their `begins` and `ends`, by `begins`, newest first (ties by sale key). Each lists its products.";
const UPCOMING =
  "Sales whose `begins` is still to come, by `begins`, soonest first (ties by sale key). Products are not shown before a sale begins.";
const activeList = (summary: string): EndpointDoc => ({
  tag: "Sales",
  summary,
  description: ACTIVE,
  response: "The active sales, newest first.",
  examples: { sample: { summary: "Two sales of the sample catalog", value: "activeSales" } },
});
const upcomingList = (summary: string): EndpointDoc => ({
  tag: "Sales",
  summary,
  description: UPCOMING,
  response: "The upcoming sales, soonest first.",
  examples: { sample: { summary: "Two sales of the sample catalog", value: "upcomingSales" } },
});

const calendar = (summary: string): EndpointDoc => ({
  tag: "Sales",
  summary,
  description:
    "An iCalendar feed (RFC 5545, with RFC 7986's `NAME` and `REFRESH-INTERVAL`) to subscribe to in a calendar app: one `VEVENT` per active or upcoming sale, with a `UID` that stays the same across snapshots (`<store>-<sale_key>@<API host>`), `DTSTART`/`DTEND` in UTC, the sale's name, description and page link (with `affid`). Cached like the lists (`ETag`, `max-age` never past the next change).",
  response: "The calendar.",
  media: {
    type: "text/calendar",
    schema: {
      type: "string",
      example:
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//flash-sale-api//sales calendar 1//EN\r\nNAME:Flash sales\r\nBEGIN:VEVENT\r\nUID:women-boots@api.example.com\r\nDTSTART:20261122T170000Z\r\nDTEND:20261124T170000Z\r\nSUMMARY:Boots\r\nURL:https://www.example-retailer.com/sale/boots?utm_medium=api\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    },
  },
});

/** Every endpoint, in the order the document lists them. */
export const ENDPOINTS: readonly Endpoint[] = [
  {
    id: "listActiveSales",
    path: "/v1/sales/active.json",
    route: "sale_list",
    answer: "resource",
    body: "SaleList",
    doc: activeList("Active sales, every store"),
  },
  {
    id: "listStoreActiveSales",
    path: "/v1/sales/{store}/active.json",
    route: "sale_list",
    answer: "resource",
    params: { store: STORE },
    body: "SaleList",
    missing: inStore("no such resource"),
    doc: activeList("Active sales of one store"),
  },
  {
    id: "listUpcomingSales",
    path: "/v1/sales/upcoming.json",
    route: "sale_list",
    answer: "resource",
    body: "SaleList",
    doc: upcomingList("Upcoming sales, every store"),
  },
  {
    id: "listStoreUpcomingSales",
    path: "/v1/sales/{store}/upcoming.json",
    route: "sale_list",
    answer: "resource",
    params: { store: STORE },
    body: "SaleList",
    missing: inStore("no such resource"),
    doc: upcomingList("Upcoming sales of one store"),
  },
  {
    id: "getUpcomingCalendar",
    path: "/v1/sales/upcoming.ics",
    route: "calendar",
    answer: "calendar",
    doc: calendar("Calendar of active and upcoming sales, every store"),
  },
  {
    id: "getStoreUpcomingCalendar",
    path: "/v1/sales/{store}/upcoming.ics",
    route: "calendar",
    answer: "calendar",
    params: { store: STORE },
    missing: inStore("no such resource"),
    doc: calendar("Calendar of active and upcoming sales of one store"),
  },
  {
    id: "getSale",
    path: "/v1/sales/{store}/{sale_key}/detail.json",
    route: "sale_detail",
    answer: "resource",
    params: {
      store: STORE,
      sale_key: {
        pattern: "[^/]+",
        description: "The sale's key, unique within its store.",
        schema: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,63}$" },
        example: "activeSaleKey",
      },
    },
    body: "Sale",
    missing: inStore("no such sale in this store"),
    doc: {
      tag: "Sales",
      summary: "One sale",
      description:
        "A sale, upcoming or active (with its products once active); a 404 once it has ended, and for a sale key the store does not have.",
      response: "The sale.",
      examples: {
        active: { summary: "An active sale (two of its products shown)", value: "activeSale" },
        upcoming: { summary: "An upcoming sale: no products yet", value: "upcomingSale" },
      },
    },
  },
  {
    id: "getProduct",
    path: "/v1/products/{product_id}/detail.json",
    route: "product",
    answer: "resource",
    params: {
      product_id: {
        pattern: "[^/]+",
        description: "The product's ID.",
        schema: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
        example: "productId",
      },
    },
    body: "Product",
    missing: () => "no such product",
    doc: {
      tag: "Products",
      summary: "One product",
      description:
        "A product while a sale that lists it is active; a 404 otherwise (products of upcoming sales are not shown).",
      response: "The product.",
      examples: { sample: { summary: "A product of the sample catalog", value: "product" } },
    },
  },
  {
    id: "listCategories",
    path: "/v1/products/categories.json",
    route: "categories",
    answer: "resource",
    body: "Categories",
    doc: {
      tag: "Products",
      summary: "Categories on sale now",
      description: "The distinct categories of the products on sale now, sorted.",
      response: "The categories.",
      examples: { sample: { summary: "Six categories of the sample", value: "categories" } },
    },
  },
  {
    id: "listSizes",
    path: "/v1/products/sizes.json",
    route: "sizes",
    answer: "resource",
    body: "Sizes",
    doc: {
      tag: "Products",
      summary: "Size keys on sale now",
      description:
        "The sizes of the SKUs on sale now, by size group name and label: the keys the search's `size` takes.",
      response: "The size keys.",
      examples: { sample: { summary: "Two size groups of the sample", value: "sizes" } },
    },
  },
  {
    id: "searchProducts",
    path: "/v1/products",
    route: "search",
    answer: "search",
    body: "SearchResult",
    doc: {
      tag: "Search",
      summary: "Search the products on sale now",
      description:
        "Products on sale now whose name and description hold every word of `q`, most relevant first, narrowed by the filters; one page of `rows` from `start`.",
      response: "A page of products.",
      examples: { sample: { summary: "One product found", value: "searchResult" } },
    },
  },
  {
    id: "streamEvents",
    path: "/v1/events",
    route: "events",
    answer: "stream",
    doc: {
      tag: "Events",
      summary: "Sale events, pushed as they happen",
      description: [
        "A `text/event-stream` (Server-Sent Events, as the WHATWG HTML standard defines them: a browser's `EventSource` reads it) that stays open. Event types:",
        "",
        "| `event` | when | `sale` |",
        "|---|---|---|",
        "| `sale.begins` | at the sale's `begins`, to the second | as the active list shows it (with its products) |",
        "| `sale.ends` | at the sale's `ends` | as the active list last showed it |",
        "| `sale.announced` | a new snapshot adds an upcoming (or active) sale | as the lists show it then |",
        "| `sale.updated` | a new snapshot changes a sale that is upcoming or active | as the lists show it then |",
        "",
        '`data` is JSON: `{"sale": <the sale, with `affid` in its page link when given>, "at": "<the scheduled instant, RFC 3339>", "sent": "<when it was sent, RFC 3339 with milliseconds>"}` (`at` of announced/updated: when the snapshot was built).',
        "Each `id` is derived from the event itself, the same on every server; reconnect with `Last-Event-ID` (EventSource does) to get the events missed since, in order: `sale.begins`/`sale.ends` up to 24 hours back on any server, `sale.announced`/`sale.updated` from the server that sent them.",
        "The stream starts with `retry:` and a comment line, and sends a comment at least every 15 s. Beyond the streams a key may hold at once: 429; beyond the server's: 503. A client that stops reading is disconnected. When a server shuts down it ends its streams: reconnect (EventSource does).",
      ].join("\n"),
      response: "The event stream.",
      media: {
        type: "text/event-stream",
        schema: {
          type: "string",
          description:
            'Events `id: <id>`, `event: <type>`, `data: {"sale": Sale, "at": date-time, "sent": date-time}`, each ended by a blank line; comment lines start with `:`.',
          example:
            'retry: 2000\n: 20261122T1655Z-1a2b\n\nid: 1795366800.1.q3VJk1Xr0cO3yQ2m\nevent: sale.begins\ndata: {"sale":{"name":"Boots","sale_key":"boots","store":"women","begins":"2026-11-22T17:00:00Z"},"at":"2026-11-22T17:00:00Z","sent":"2026-11-22T17:00:00.012Z"}\n\n',
        },
      },
      query: [
        {
          name: "store",
          in: "query",
          description: "Only the events of these stores (repeatable; `children` is `kids`). Default every store.",
          schema: { type: "array", items: { type: "string", enum: [...STORES, "children"] }, maxItems: 32 },
          style: "form",
          explode: true,
        },
        {
          name: "types",
          in: "query",
          description: "Only these event types (repeatable, or comma-separated). Default all four.",
          schema: {
            type: "array",
            items: { type: "string", enum: ["sale.announced", "sale.begins", "sale.ends", "sale.updated"] },
            maxItems: 32,
          },
          style: "form",
          explode: true,
        },
        {
          name: "Last-Event-ID",
          in: "header",
          description: "The `id` of the last event received: the stream starts with the events missed since.",
          schema: { type: "string", maxLength: 64 },
        },
      ],
    },
  },
  {
    id: "getUsage",
    path: "/v1/usage.json",
    route: "usage",
    answer: "usage",
    rateLimited: false,
    body: "Usage",
    doc: {
      tag: "Usage",
      summary: "Your key's limits and usage",
      description: [
        "The key's rate limit, what is left of its burst now, and its requests today (UTC) and in the last hour, by status class, with the bytes sent. Free of the key's rate limit (it takes no token), and never cached (`no-store`).",
        "",
        "Usage is counted by every server and handed to the usage store every few seconds (5 s by default), so the counts may be that far behind; requests answered by a cache in front of the API are counted from the cache's log where the operator has set that up. `usage` is null while the store cannot be reached, or when the operator has turned counting off.",
      ].join("\n"),
      response: "The key's limits and usage.",
      examples: { sample: { summary: "A key used today", value: "usage" } },
    },
  },
  {
    id: "getOpenApiDocument",
    path: "/v1/openapi.json",
    route: "docs",
    answer: "document",
    access: "open",
    file: { name: "openapi.json", type: "application/json; charset=utf-8" },
    doc: {
      tag: "Reference",
      summary: "This OpenAPI document",
      description: "The OpenAPI 3.1 document of the API. No key needed; CORS open.",
      response: "The document.",
      document: { type: "application/json", schema: { type: "object" } },
    },
  },
  {
    id: "getReferencePage",
    path: "/docs",
    route: "docs",
    answer: "document",
    access: "open",
    file: { name: "docs.html", type: "text/html; charset=utf-8" },
    doc: {
      tag: "Reference",
      summary: "The reference page",
      description:
        "This document as one self-contained HTML page that loads nothing from any other host. No key needed.",
      response: "The page.",
      document: { type: "text/html", schema: { type: "string" } },
    },
  },
  { id: "health", path: "/healthz", route: "health", answer: "health", access: "open" },
  { id: "metrics", path: "/metrics", route: "metrics", answer: "metrics", access: "open" },
  { id: "edgeKey", path: "/edge/key", route: "edge", answer: "edge", access: "proxies" },
];
