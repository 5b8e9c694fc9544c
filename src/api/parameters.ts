// The query parameters of the API, one table each for those every resource takes and those of search: the OpenAPI
// document is made from these rows, so a new parameter is one row (limits from the modules that enforce them).
import { z } from "zod";
import { COLOR_GROUPS, GENDERS, SIZE_KEY_RE, STORES } from "../catalog/schema.ts";
import { DEFAULT_ROWS, MAX_FILTER_VALUES, MAX_ROWS, MAX_START } from "../search/limits.ts";
import { FACET_VALUES_LIMIT } from "../search/facets.ts";
import { FACET_NAMES, SORT_ORDERS } from "../search/types.ts";
import { MAX_FUZZY_WORD_LENGTH, MAX_QUERY_TEXT_LENGTH, MAX_QUERY_WORDS } from "../search/limits.ts";
import { AFFID_RE, CALLBACK_RE, PRICE_PARAM_RE } from "./parameter-rules.ts";

/** One query parameter. */
export interface QueryParameter {
  name: string;
  /** The schema of one value (a repeatable parameter's document schema is an array of these). */
  schema: z.ZodType;
  description: string;
  /** Default false. */
  required?: boolean;
  /** May be given more than once (`store=women&store=men`): the values widen the filter. Default false. */
  repeatable?: boolean;
  /** A value for the document's example. */
  example?: string;
}

/** Taken by every /v1/ resource besides the key (which the security scheme describes). */
export const COMMON_PARAMETERS: readonly QueryParameter[] = [
  {
    name: "affid",
    schema: z.string().regex(AFFID_RE),
    description:
      "Affiliate ID: added as `&affid=<value>` to every page link (`sale_url`, product `url`) in the response. " +
      "API links are never changed.",
    example: "partner-42",
  },
  {
    name: "callback",
    schema: z.string().regex(CALLBACK_RE),
    description:
      "JSONP: the body becomes `/**/<callback>(<json>);` with `Content-Type: application/javascript`. Errors too " +
      "are a call to the callback with the problem object. An invalid name is a 400.",
    example: "showSales",
  },
  {
    name: "suppress_response_codes",
    schema: z.enum(["1"]),
    description:
      "With `callback`: errors are sent with status 200 (a browser does not run a script whose response is a 4xx); " +
      "the problem's `status` still says the real one.",
  },
];

const filterRule = `Repeatable (at most ${MAX_FILTER_VALUES} values): repeating it widens the filter (OR), different filters narrow it (AND).`;

/** The search's own parameters (`/v1/products`), in the order the document lists them. */
export const SEARCH_PARAMETERS: readonly QueryParameter[] = [
  {
    name: "q",
    schema: z.string().min(1).max(MAX_QUERY_TEXT_LENGTH),
    required: true,
    description:
      "Words to find in the product's name and description; every word must match (case, accents and English " +
      "word endings aside), or nearly (see `typos` and `prefix`). Ranked by penalty (0 for an exact word, 1 for a " +
      "prefix completion, 2 per typo edit: every exact match comes first), then relevance (BM25F), then product ID. " +
      `Must not be blank; at most ${MAX_QUERY_TEXT_LENGTH} characters, as sent and once case, accents and ` +
      `compatibility forms are folded (\`㌖\` is six letters), and at most ${MAX_QUERY_WORDS} distinct words; a ` +
      `word longer than ${MAX_FUZZY_WORD_LENGTH} letters matches only exactly.`,
    example: "leather boots",
  },
  {
    name: "store",
    schema: z.enum([...STORES, "children"]),
    repeatable: true,
    description: `Only products on sale in this store (\`children\` is \`kids\`). ${filterRule}`,
    example: "women",
  },
  {
    name: "brand",
    schema: z.string().min(1).max(MAX_QUERY_TEXT_LENGTH),
    repeatable: true,
    description: `Words of the brand name (\`calvin\` matches "Calvin Klein"). ${filterRule}`,
    example: "calvin",
  },
  {
    name: "color",
    schema: z.enum(COLOR_GROUPS),
    repeatable: true,
    description: `A colour group: a product matches when any of its SKUs is of it. ${filterRule}`,
    example: "black",
  },
  {
    name: "gender",
    schema: z.enum(GENDERS),
    repeatable: true,
    description: `For kids' products. ${filterRule}`,
  },
  {
    name: "size",
    schema: z.string().regex(SIZE_KEY_RE),
    repeatable: true,
    description: `A size key (see /v1/products/sizes.json): a product matches when any of its SKUs has it. ${filterRule}`,
    example: "WoSh:8.5",
  },
  {
    name: "typos",
    schema: z.enum(["0", "1"]).default("1"),
    description:
      "`1`: a query word of 4 to 7 letters also matches words one edit away (a letter added, removed, changed, or " +
      "two swapped), 8 letters or more two edits; words with digits and shorter words match exactly. `0`: exact only.",
  },
  {
    name: "prefix",
    schema: z.enum(["0", "1"]).default("0"),
    description:
      "`1`: the last query word (3 letters or more) also matches the words it begins, for search as you type. " +
      "Whole-word matches rank first.",
  },
  {
    name: "sort",
    schema: z.enum(SORT_ORDERS).default("relevance"),
    description:
      "`price_asc`/`price_desc`: by the lowest sale price among the product's SKUs on sale; `discount`: largest " +
      "percentage off first; `newest`: the sale that began most recently first. Ties by relevance, then product ID, " +
      "so pages never overlap or skip.",
  },
  {
    name: "min_price",
    schema: z.string().regex(PRICE_PARAM_RE),
    description: "Only products whose price (as for `sort`) is at least this, inclusive: a decimal like `19.99`.",
    example: "20",
  },
  {
    name: "max_price",
    schema: z.string().regex(PRICE_PARAM_RE),
    description:
      "Only products whose price is at most this, inclusive. Above `min_price` is required (else a 400 naming `min_price`).",
    example: "99.99",
  },
  {
    name: "facets",
    schema: z.string().regex(new RegExp(`^(${FACET_NAMES.join("|")})(,(${FACET_NAMES.join("|")}))*$`)),
    repeatable: true,
    description:
      `Comma-separated facets to count over every match (not just the page): any of ${FACET_NAMES.join(", ")}. ` +
      `The result gets \`facets\`: per facet, up to ${FACET_VALUES_LIMIT} values with their counts, most frequent first. ` +
      "Counts are disjunctive: a facet's counts apply every other filter but not its own.",
    example: "brand,color",
  },
  {
    name: "rows",
    schema: z.number().int().min(1).max(MAX_ROWS).default(DEFAULT_ROWS),
    description: "Products per page.",
  },
  {
    name: "start",
    schema: z.number().int().min(0).max(MAX_START).default(0),
    description:
      "How many products to skip: the offset of the page. Past the end gives `products: []` with the real `total_found`.",
  },
];
