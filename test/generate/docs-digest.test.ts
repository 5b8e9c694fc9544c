// The search documents' digest, hashed a chunk at a time, is the digest of their whole JSON (what earlier builds
// recorded in search_docs_digest, so that their index is still reused).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { digestDocs } from "../../src/generate/search-index.ts";
import { SEARCH_INDEX_VERSION } from "../../src/search/index-format.ts";
import type { SearchDoc } from "../../src/search/types.ts";

const whole = (docs: SearchDoc[], code: string | null) =>
  createHash("sha256")
    .update(`${SEARCH_INDEX_VERSION}\0${code}\0${JSON.stringify(docs)}`)
    .digest("hex");

const doc = (id: number, description: string): SearchDoc => ({
  id,
  name: `Boot ${id} — déjà vu ☃`,
  description,
  brand: "Brand",
  colorGroups: ["black"],
  sizeKeys: ["WoSh:8"],
  windows: [{ from: 1_800_000_000, to: null, store: "women" }],
  categories: ["Shoes"],
  price: 1999,
  discount: 2500,
});

describe("digestDocs", () => {
  it.each([
    ["no documents", [], "code"],
    ["one document", [doc(1, "Leather")], "code"],
    ["no code digest", [doc(1, "Leather"), doc(2, "Suede")], null],
    // Past the 1 MiB chunk, with a chunk boundary after a multi-byte character.
    ["several chunks", Array.from({ length: 3000 }, (_, i) => doc(i, `${"é".repeat(i % 7)}${"x".repeat(900)}`)), "c"],
  ])("%s: the digest of the whole JSON", (_, docs, code) => {
    expect(digestDocs(docs, code)).toBe(whole(docs, code));
  });
});
