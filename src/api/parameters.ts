// The query parameters of the API, one table each for those every resource takes and those of search: the OpenAPI
// document is made from these rows, so a new parameter is one row (limits from the modules that enforce them).
import { z } from "zod";
import { COLOR_GROUPS, GENDERS, SIZE_KEY_RE, STORES } from "../catalog/schema.ts";
import { DEFAULT_ROWS, MAX_ROWS } from "../search/constants.ts";
import { AFFID_RE, CALLBACK_RE } from "../serve/request.ts";
import { MAX_FILTER_VALUES, MAX_START, MAX_TEXT_LENGTH } from "../serve/search-params.ts";

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
    schema: z.string().min(1).max(MAX_TEXT_LENGTH),
    required: true,
    description:
      "Words to find in the product's name and description; every word must match (case, accents and English " +
      "word endings aside). Results are ranked by relevance (BM25), ties by product ID. Must not be blank.",
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
    schema: z.string().min(1).max(MAX_TEXT_LENGTH),
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

/** Most values a repeatable parameter takes. */
export const MAX_VALUES = MAX_FILTER_VALUES;
