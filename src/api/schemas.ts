// The bodies the API sends, as zod schemas: the one source of the OpenAPI document and of the tests' body checks.
import { z } from "zod";
import { ROUTE_CLASSES } from "./endpoints.ts";
import { matchEndpoint } from "./routing.ts";
import { INVENTORY_STATUSES, STORES } from "../catalog/schema.ts";
import { PROBLEM_CODES } from "../errors.ts";
import { FACET_NAMES } from "../search/types.ts";
import { FACET_VALUES_LIMIT } from "../search/facets.ts";

// Only checks that JSON Schema can say (types, patterns, lengths, ranges, enums): no refinements, which
// z.toJSONSchema cannot carry into the document, so the document states every limit the tests check.

/** RFC 3339 UTC with seconds and a `Z`, as every timestamp is sent. */
const Timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
  .meta({ format: "date-time", description: "RFC 3339, UTC, whole seconds", examples: ["2026-11-22T17:00:00Z"] });

/** Money: a string with exactly two decimals, never a JSON number. */
const Price = z
  .string()
  .regex(/^(0|[1-9][0-9]*)\.[0-9]{2}$/)
  .meta({ description: "Money, a string with two decimals", examples: ["59.00"] });

const Url = z
  .string()
  .regex(/^https?:\/\/[^\s]+$/)
  .meta({ format: "uri" });
const Id = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const ImageSchema = z
  .strictObject({ url: Url, width: z.number().int().min(1), height: z.number().int().min(1) })
  .meta({ id: "Image" });

const ImageMapSchema = z.record(z.string().regex(/^[0-9]+x[0-9]+$/), z.array(ImageSchema)).meta({
  id: "ImageMap",
  description: "Images by size: keys are `<width>x<height>`, values the images of that size.",
});

const SaleSchema = z
  .strictObject({
    name: z.string(),
    sale: Url.meta({ description: "This sale's detail resource in the API" }),
    sale_key: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
    store: z.enum(STORES),
    sale_url: Url.meta({ description: "The sale's page on the retailer's site (carries `affid` when given)" }),
    description: z.string().optional(),
    begins: Timestamp,
    ends: Timestamp.optional().meta({ description: "Absent for an open-ended sale" }),
    image_urls: ImageMapSchema,
    products: z
      .array(Url)
      .min(1)
      .optional()
      .meta({ description: "Product detail resources; only on an active sale that has products" }),
    product_ids: z.array(Id).min(1).optional().meta({ description: "The same products as IDs, in the same order" }),
  })
  .meta({ id: "Sale", description: "A sale, in a list and as sale detail (the same shape)." });

const SaleListSchema = z
  .strictObject({ sales: z.array(SaleSchema) })
  .meta({ id: "SaleList", description: "Active sales newest first, or upcoming sales soonest first." });

const SkuSchema = z
  .strictObject({
    id: Id,
    inventory_status: z.enum(INVENTORY_STATUSES),
    msrp_price: Price,
    sale_price: Price,
    shipping_surcharge: Price.optional(),
    attributes: z.array(z.strictObject({ name: z.string(), value: z.string() })),
  })
  .meta({ id: "Sku" });

const ProductSchema = z
  .strictObject({
    id: Id,
    name: z.string(),
    product: Url.meta({ description: "This product's detail resource in the API" }),
    url: Url.meta({ description: "The product's page on the retailer's site (carries `affid` when given)" }),
    brand: z.string(),
    content: z.strictObject({
      description: z.string().optional(),
      fit_notes: z.string().optional(),
      material: z.string().optional(),
      care_instructions: z.string().optional(),
      origin: z.string().optional(),
    }),
    image_urls: ImageMapSchema,
    skus: z.array(SkuSchema).min(1),
    categories: z.array(z.string()),
  })
  .meta({ id: "Product", description: "A product on sale now." });

const CategoriesSchema = z
  .strictObject({ categories: z.array(z.string()) })
  .meta({ id: "Categories", description: "Distinct categories of the products on sale now, sorted." });

const SizesSchema = z.record(z.string(), z.record(z.string(), z.string().regex(/^[A-Za-z]{2,8}:[^:]{1,32}$/))).meta({
  id: "Sizes",
  description: "Size keys of the SKUs on sale now: size group name -> size label -> size key.",
  examples: [{ "Women's Shoes": { "8": "WoSh:8", "8.5": "WoSh:8.5" } }],
});

export const SearchResultSchema = z
  .strictObject({
    products: z.array(ProductSchema),
    total_found: z.number().int().min(0).meta({ description: "Every match, not just this page" }),
    facets: z
      .partialRecord(
        z.enum(FACET_NAMES),
        z.array(z.strictObject({ value: z.string(), count: z.number().int().min(1) })).max(FACET_VALUES_LIMIT),
      )
      .optional()
      .meta({
        description: "Only with `facets`: each facet asked for, its values and their counts, most frequent first",
      }),
  })
  .meta({ id: "SearchResult", description: "One page of products, most relevant first." });

const statusCounts = {
  requests: z.number().int().min(0).meta({ description: "Every request with the key, whatever its status" }),
  ok: z.number().int().min(0).meta({ description: "Answered 2xx" }),
  not_modified: z.number().int().min(0).meta({ description: "Answered 304 (a conditional request)" }),
  client_error: z.number().int().min(0).meta({ description: "Answered 4xx other than 429" }),
  limited: z.number().int().min(0).meta({ description: "Answered 429 (over the rate limit)" }),
  server_error: z.number().int().min(0).meta({ description: "Answered 5xx" }),
  bytes: z.number().int().min(0).meta({ description: "Bytes of the response bodies sent" }),
};

const UsageEndpointCountsSchema = z
  .strictObject({
    endpoint: z.enum([...ROUTE_CLASSES, "unknown"]).meta({
      description: "The route class (as the metrics name it); `unknown` for requests counted before endpoints were",
    }),
    ...statusCounts,
  })
  .meta({ id: "UsageEndpointCounts", description: "A key's requests to one kind of endpoint over a span." });

const UsageCountsSchema = z
  .strictObject({
    since: z.iso.datetime().meta({ description: "The start of the span (UTC)" }),
    ...statusCounts,
    endpoints: z.array(UsageEndpointCountsSchema).meta({
      description: "The same requests by endpoint, busiest first: only the endpoints the key used in the span",
    }),
  })
  .meta({ id: "UsageCounts", description: "A key's requests over a span, by status class and by endpoint." });

const UsageSchema = z
  .strictObject({
    key: z.string().meta({ description: "The key's name (as the developer portal lists it): never the key itself" }),
    limits: z.strictObject({
      rate: z.number().positive().meta({ description: "Requests a second, sustained" }),
      burst: z.number().int().min(1).meta({ description: "Requests at once on top of the rate" }),
    }),
    burst: z.strictObject({
      remaining: z.number().int().min(0).meta({ description: "Requests that may be made at once now" }),
      reset: z.number().int().min(0).meta({ description: "Seconds until the burst is whole again" }),
    }),
    usage: z
      .strictObject({
        today: UsageCountsSchema,
        last_hour: UsageCountsSchema,
      })
      .nullable()
      .meta({ description: "Null while usage cannot be read (the store is down, or counting is off)" }),
  })
  .meta({ id: "Usage", description: "A key's limits and recent usage." });

export const ProblemSchema = z
  .strictObject({
    type: z.string().regex(/^urn:flash-sale-api:problem:[a-z_]+$/),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    detail: z.string(),
    code: z.enum(PROBLEM_CODES),
  })
  .meta({ id: "Problem", description: "An RFC 9457 problem: every error the API answers." });

/** Every response body schema, by the name the OpenAPI document gives it. */
export const RESPONSE_SCHEMAS = {
  SaleList: SaleListSchema,
  Sale: SaleSchema,
  Product: ProductSchema,
  Categories: CategoriesSchema,
  Sizes: SizesSchema,
  SearchResult: SearchResultSchema,
  Usage: UsageSchema,
  Problem: ProblemSchema,
} as const;

/** The schema of a 200 body of a /v1/ path (its query aside), or null for a path the API does not have. */
export function bodySchemaOf(path: string): z.ZodType | null {
  const body = matchEndpoint(path)?.endpoint.body;
  return body === undefined ? null : RESPONSE_SCHEMAS[body];
}
