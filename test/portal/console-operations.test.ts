// The console's reading of the OpenAPI document (src/portal/console-operations.ts): every GET under /v1/ of the
// endpoint table, each parameter with its place, kind, values, repetition, requirement and default.
import { describe, expect, it } from "vitest";
import { ENDPOINTS } from "../../src/api/endpoints.ts";
import type { Examples } from "../../src/api/examples.ts";
import { createOpenApiDocument } from "../../src/api/openapi.ts";
import { consoleOperations } from "../../src/portal/console-operations.ts";

/** Bodies do not matter here: the console reads the parameters only. */
const EXAMPLES: Examples = {
  activeSales: {},
  upcomingSales: {},
  activeSale: {},
  upcomingSale: {},
  product: {},
  categories: {},
  sizes: {},
  searchResult: {},
  usage: {},
  store: "women",
  activeSaleKey: "boots",
  upcomingSaleKey: "soon",
  productId: 2,
};

const operations = consoleOperations(
  createOpenApiDocument({ baseUrl: "https://api.example.test", examples: EXAMPLES }),
);
const byId = (id: string) => operations.find((o) => o.id === id)!;
const parameter = (id: string, name: string) => byId(id).parameters.find((p) => p.name === name);

describe("the console's operations", () => {
  it("are the endpoint table's documented GETs under /v1/, in its order", () => {
    const documented = ENDPOINTS.filter((e) => e.doc && e.path.startsWith("/v1/"));
    expect(operations.map((o) => [o.id, o.path])).toEqual(documented.map((e) => [e.id, e.path]));
    expect(operations.filter((o) => !o.keyed).map((o) => o.id)).toEqual(["getOpenApiDocument"]);
  });

  it.each([
    ["searchProducts", "q", { in: "query", kind: "text", required: true, repeatable: false, example: "leather boots" }],
    [
      "searchProducts",
      "store",
      { kind: "choice", repeatable: true, values: ["women", "men", "kids", "home", "children"] },
    ],
    ["searchProducts", "brand", { kind: "text", repeatable: true, required: false }],
    ["searchProducts", "rows", { kind: "integer", minimum: 1, maximum: 100, default: "10" }],
    ["searchProducts", "sort", { kind: "choice", repeatable: false, default: "relevance" }],
    ["getSale", "store", { in: "path", kind: "choice", required: true }],
    ["getSale", "sale_key", { in: "path", kind: "text", required: true, example: "boots" }],
    ["getProduct", "product_id", { in: "path", kind: "integer", required: true, example: "2" }],
    ["listActiveSales", "affid", { in: "query", kind: "text", required: false }],
    [
      "streamEvents",
      "types",
      { kind: "choice", repeatable: true, values: ["sale.announced", "sale.begins", "sale.ends", "sale.updated"] },
    ],
  ] as const)("%s's %s", (id, name, expected) => {
    expect(parameter(id, name)).toMatchObject(expected);
  });

  it("puts path parameters first, in the path's order, and leaves header parameters out", () => {
    expect(byId("getSale").parameters.map((p) => p.name)).toEqual([
      "store",
      "sale_key",
      "affid",
      "callback",
      "suppress_response_codes",
    ]);
    expect(parameter("streamEvents", "Last-Event-ID")).toBeUndefined();
  });
});
