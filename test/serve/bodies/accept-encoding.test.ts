// Accept-Encoding negotiation as a table: each row a header, which variants the body has, and the encoding sent.
import { describe, expect, it } from "vitest";
import type { ContentEncoding } from "../../../src/serve/bodies/accept-encoding.ts";
import { negotiateEncoding } from "../../../src/serve/bodies/accept-encoding.ts";

type Row = [header: string | undefined, hasBr: boolean, hasGzip: boolean, expected: ContentEncoding];

const BOTH = [true, true] as const;
const GZIP_ONLY = [false, true] as const;
const BR_ONLY = [true, false] as const;
const NEITHER = [false, false] as const;

/** One test per row: the header, with the variants the row gives, negotiates the row's encoding. */
const negotiates = (rows: Row[]) =>
  it.each<Row>(rows)("%j (br %s, gzip %s) -> %s", (header, br, gzip, expected) => {
    expect(negotiateEncoding(header, br, gzip)).toBe(expected);
  });

describe("negotiateEncoding", () => {
  describe("missing or empty header: identity", () => {
    negotiates([
      [undefined, ...BOTH, "identity"],
      ["", ...BOTH, "identity"],
      [" ", ...BOTH, "identity"],
      [",", ...BOTH, "identity"],
    ]);
  });

  describe("which variants the body has", () => {
    negotiates([
      ["br, gzip", ...BOTH, "br"],
      ["br, gzip", ...GZIP_ONLY, "gzip"],
      ["br, gzip", ...BR_ONLY, "br"],
      ["br, gzip", ...NEITHER, "identity"],
      ["br", ...GZIP_ONLY, "identity"],
      ["gzip", ...BR_ONLY, "identity"],
      ["gzip", ...BOTH, "gzip"],
      ["*", ...NEITHER, "identity"],
    ]);
  });

  describe("q-values", () => {
    negotiates([
      ["gzip, deflate, br", ...BOTH, "br"],
      ["br;q=0, gzip", ...BOTH, "gzip"],
      ["br;q=0, gzip;q=0", ...BOTH, "identity"],
      ["gzip;q=0", ...BOTH, "identity"],
      ["gzip;q=0.0", ...BOTH, "identity"],
      ["gzip;q=0.000", ...BOTH, "identity"],
      ["gzip;q=0.001", ...BOTH, "gzip"],
      ["gzip;q=1", ...BOTH, "gzip"],
      ["gzip;q=1.0, br;q=0.5", ...BOTH, "br"], // brotli whenever it is acceptable: q only says yes (> 0) or no (0)
      ["br;q=0.1, gzip;q=0.9", ...BOTH, "br"],
      ["gzip;level=9", ...BOTH, "gzip"], // parameters other than q are ignored
      ["gzip;level=9;q=0", ...BOTH, "identity"],
      ["gzip;q=0, gzip", ...BOTH, "gzip"], // the last mention of a coding wins
      ["gzip, gzip;q=0", ...BOTH, "identity"],
      ["x-gzip", ...BOTH, "gzip"],
      ["x-gzip;q=0, br;q=0", ...BOTH, "identity"],
      ["deflate", ...BOTH, "identity"],
      ["compress, deflate", ...BOTH, "identity"],
      ["zstd", ...BOTH, "identity"],
    ]);
  });

  describe("malformed q-values", () => {
    negotiates([
      ["gzip;q=abc", ...BOTH, "gzip"], // not a number: the q is ignored, as if absent
      ["gzip;q=", ...BOTH, "gzip"],
      ["gzip;q=-1", ...BOTH, "gzip"], // a sign is not matched either: ignored, so accepted
      ["gzip;q=1.2.3", ...BOTH, "gzip"], // not a qvalue (RFC 9110: 0 to 1, three decimals at most): ignored
      ["gzip;q=2", ...BOTH, "gzip"],
      ["gzip;q=0.0001", ...BOTH, "gzip"],
      ["gzip;q=1.5", ...BOTH, "gzip"],
      ["gzip;q=00", ...BOTH, "gzip"],
      ["gzip;q=0.", ...BOTH, "identity"], // "0." is a qvalue: zero
      ["gzip;q=1.000, br;q=0.000", ...BOTH, "gzip"],
    ]);
  });

  describe("* and identity", () => {
    negotiates([
      ["*", ...BOTH, "br"],
      ["*", ...GZIP_ONLY, "gzip"],
      ["*;q=0.5", ...BOTH, "br"],
      ["*;q=0", ...BOTH, "identity"],
      ["*;q=0, gzip", ...BOTH, "gzip"],
      ["gzip, *;q=0", ...BOTH, "gzip"], // an explicit coding beats *, whatever the order
      ["br;q=0, *", ...BOTH, "gzip"],
      ["*, br;q=0, gzip;q=0", ...BOTH, "identity"],
      ["identity", ...BOTH, "identity"],
      ["identity;q=0", ...BOTH, "identity"], // identity refused, nothing else offered: identity all the same
      ["identity;q=0, gzip", ...BOTH, "gzip"],
      ["identity;q=0, *", ...BOTH, "br"],
      ["identity, gzip;q=0.1", ...BOTH, "gzip"],
    ]);
  });

  describe("case and whitespace", () => {
    negotiates([
      ["GZIP", ...BOTH, "gzip"],
      ["Br", ...BOTH, "br"],
      ["X-GZIP", ...BOTH, "gzip"],
      ["gzip;Q=0", ...BOTH, "identity"],
      ["BR;Q=0, GZip", ...BOTH, "gzip"],
      ["  gzip  ", ...BOTH, "gzip"],
      ["gzip,br", ...GZIP_ONLY, "gzip"],
      ["gzip ,\tbr", ...BOTH, "br"],
      [" gzip ; q = 0 ", ...BOTH, "identity"],
      ["br ;q=0 , gzip ; q=0.8", ...BOTH, "gzip"],
      ["gzip;\tq=0", ...BOTH, "identity"],
    ]);
  });

  it("answers the same for a header it has seen before, also after more distinct headers than its cache holds", () => {
    const header = "br;q=0, gzip;q=0.5";
    expect(negotiateEncoding(header, true, true)).toBe("gzip");
    expect(negotiateEncoding(header, true, false)).toBe("identity");
    for (let i = 0; i < 1000; i++)
      expect(negotiateEncoding(`gzip;q=0.${i}`, true, true)).toBe(i === 0 ? "identity" : "gzip");
    expect(negotiateEncoding(header, true, true)).toBe("gzip");
    expect(negotiateEncoding(header, true, false)).toBe("identity");
  });
});
