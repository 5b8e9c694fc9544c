// The shape of the document's examples (made from the sample snapshot by src/generate/sample-examples.ts, so they are what
// the API really sends), and the one example no snapshot holds: a key's usage.

/** Example bodies, by what they show. */
export interface Examples {
  activeSales: unknown;
  upcomingSales: unknown;
  activeSale: unknown;
  upcomingSale: unknown;
  product: unknown;
  categories: unknown;
  sizes: unknown;
  searchResult: unknown;
  usage: unknown;
  /** Path parameters that lead to the examples above. */
  store: string;
  activeSaleKey: string;
  upcomingSaleKey: string;
  productId: number;
}

/** What GET /v1/usage.json answers a key used today (no snapshot holds it: it is the key's own). */
export const USAGE_EXAMPLE = {
  key: "acme-shop",
  limits: { rate: 50, burst: 200 },
  burst: { remaining: 196, reset: 1 },
  usage: {
    today: {
      since: "2026-11-22T00:00:00Z",
      requests: 18_412,
      ok: 15_003,
      not_modified: 3_211,
      client_error: 160,
      limited: 38,
      server_error: 0,
      bytes: 412_554_120,
      endpoints: [
        {
          endpoint: "sale_list",
          requests: 12_950,
          ok: 9_900,
          not_modified: 3_040,
          client_error: 0,
          limited: 10,
          server_error: 0,
          bytes: 380_102_500,
        },
        {
          endpoint: "product",
          requests: 5_462,
          ok: 5_103,
          not_modified: 171,
          client_error: 160,
          limited: 28,
          server_error: 0,
          bytes: 32_451_620,
        },
      ],
    },
    last_hour: {
      since: "2026-11-22T16:00:00Z",
      requests: 1_204,
      ok: 990,
      not_modified: 201,
      client_error: 13,
      limited: 0,
      server_error: 0,
      bytes: 27_310_442,
      endpoints: [
        {
          endpoint: "sale_list",
          requests: 1_204,
          ok: 990,
          not_modified: 201,
          client_error: 13,
          limited: 0,
          server_error: 0,
          bytes: 27_310_442,
        },
      ],
    },
  },
};
