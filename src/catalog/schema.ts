// zod schemas of the retailer's catalog: the input side of the build, one NDJSON object a line.
import { z } from "zod";

/** The four stores, in the order lists and docs name them. */
export const STORES = ["women", "men", "kids", "home"] as const;
export type Store = (typeof STORES)[number];

/** The thirteen colour groups a SKU's colour belongs to. */
export const COLOR_GROUPS = [
  "black",
  "grey",
  "white",
  "brown",
  "beige",
  "green",
  "blue",
  "purple",
  "red",
  "pink",
  "yellow",
  "orange",
  "miscellaneous",
] as const;
export type ColorGroup = (typeof COLOR_GROUPS)[number];

export const GENDERS = ["boy", "girl", "unisex"] as const;
export type Gender = (typeof GENDERS)[number];

export const INVENTORY_STATUSES = ["for sale", "reserved", "sold out"] as const;

/** Catalog format version this build reads (`catalog.json` `format`). */
export const CATALOG_FORMAT = 1;

/** Largest ID we accept: IDs are JSON numbers, so they must stay exact doubles. */
const MAX_ID = Number.MAX_SAFE_INTEGER;

const SALE_KEY_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;
/** Money as the contract sends it: a non-negative decimal string with exactly two decimals. */
const PRICE_RE = /^(0|[1-9][0-9]{0,8})\.[0-9]{2}$/;
/** `<group code>:<label>`: group code short mixed-case ASCII, label printable without `:` or control bytes. */
export const SIZE_KEY_RE = /^([A-Za-z]{2,8}):([^:\u0000-\u001f\u007f]{1,32})$/;
/** RFC 3339 with an explicit offset; the build normalises it to UTC seconds. */
const TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const nonBlank = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim().length > 0, "must not be blank");

const IdSchema = z.number().int().positive().max(MAX_ID);

const PriceSchema = z.string().regex(PRICE_RE, 'must be money: a string with two decimals, like "99.00"');

const TimestampSchema = z
  .string()
  .regex(TIMESTAMP_RE, "must be an RFC 3339 timestamp with an offset, like 2026-11-22T17:00:00Z")
  .refine((s) => !Number.isNaN(Date.parse(s)), "is not a real date and time")
  .refine((s) => Date.parse(s) % 1000 === 0, "must be a whole second");

const ImageSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(2048),
  width: z.number().int().positive().max(20000),
  height: z.number().int().positive().max(20000),
});
export type Image = z.infer<typeof ImageSchema>;

export const CatalogMetaSchema = z.strictObject({
  format: z.literal(CATALOG_FORMAT),
  /** The retailer's site: page links are `site_url` + the product's `page_path` or `/sale/<store>/<key>`. */
  site_url: z.url({ protocol: /^https?$/ }).refine((u) => !u.endsWith("/"), "must not end with /"),
});
export type CatalogMeta = z.infer<typeof CatalogMetaSchema>;

export const SaleSchema = z.strictObject({
  key: z.string().regex(SALE_KEY_RE, "must be a URL-safe slug: [a-z0-9][a-z0-9-]*, at most 64 characters"),
  store: z.enum(STORES),
  name: nonBlank(200),
  description: z.string().max(10_000).optional(),
  begins: TimestampSchema,
  ends: TimestampSchema.optional(),
  images: z.array(ImageSchema).max(100),
  product_ids: z.array(IdSchema).max(100_000),
});
export type Sale = z.infer<typeof SaleSchema>;

const SkuSchema = z.strictObject({
  id: IdSchema,
  inventory_status: z.enum(INVENTORY_STATUSES),
  msrp_price: PriceSchema,
  sale_price: PriceSchema,
  shipping_surcharge: PriceSchema.optional(),
  /** The colour as the retailer names it ("Navy"), and the group it belongs to ("blue"). */
  color: nonBlank(64).optional(),
  color_group: z.enum(COLOR_GROUPS).optional(),
  /** The size label ("8.5"), its group's display name ("Women's Shoes") and its key ("WoSh:8.5"). */
  size: nonBlank(32).optional(),
  size_group: nonBlank(64).optional(),
  size_key: z.string().regex(SIZE_KEY_RE, "must be <group code>:<label>, like WoSh:8.5").optional(),
  /** Further attributes, sent after color and size. */
  attributes: z
    .array(z.strictObject({ name: nonBlank(64), value: nonBlank(256) }))
    .max(32)
    .optional(),
});
export type Sku = z.infer<typeof SkuSchema>;

export const ContentSchema = z.strictObject({
  description: z.string().max(20_000).optional(),
  fit_notes: z.string().max(5_000).optional(),
  material: z.string().max(5_000).optional(),
  care_instructions: z.string().max(5_000).optional(),
  origin: z.string().max(1_000).optional(),
});

export const ProductSchema = z.strictObject({
  id: IdSchema,
  name: nonBlank(300),
  brand: nonBlank(200),
  /** Path of the product's page on the retailer's site, starting with `/`. */
  page_path: z.string().regex(/^\/[A-Za-z0-9\-._~/%]{0,511}$/, "must be a path starting with / of URL-safe characters"),
  content: ContentSchema,
  categories: z.array(nonBlank(100)).max(50),
  gender: z.enum(GENDERS).optional(),
  images: z.array(ImageSchema).max(100),
  skus: z.array(SkuSchema).min(1, "must have at least one SKU").max(1000),
});
export type Product = z.infer<typeof ProductSchema>;
