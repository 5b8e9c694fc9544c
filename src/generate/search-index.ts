// The snapshot's search index: the published one when the documents are the same, else built, tokenizing only the
// texts the previous build did not analyse (search-text.ts).
import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { DocTexts } from "../search/doc-texts.ts";
import { buildSearchIndex } from "../search/index-builder.ts";
import { SEARCH_INDEX_VERSION } from "../search/index-format.ts";
import type { SearchDoc } from "../search/types.ts";
import { SEARCH_INDEX_FILE } from "../snapshot/format.ts";
import { codeDigest } from "./code-digest.ts";
import type { PreviousIndex } from "./previous.ts";
import { encodeSearchTexts, loadSearchTexts, SEARCH_TEXTS_FILE, searchTextsCode } from "./search-text.ts";

export interface SearchIndexFiles {
  /** The index file's bytes. */
  index: Uint8Array;
  /** The manifest's search_docs_digest. */
  docsDigest: string;
  /** Whether `index` is the published snapshot's (to be hard-linked from `linked`). */
  reused: boolean;
  /** Texts of documents taken from the previous build's analysis rather than tokenized (0 when `reused`). */
  textsReused: number;
  /** Files to write into the new snapshot, and files to hard-link into it (name -> path). */
  files: Record<string, Uint8Array>;
  linked: Record<string, string>;
}

export interface PreviousSearch {
  /** The published snapshot's directory. */
  dir: string;
  /** Its index, when readable and as its manifest records. */
  index: PreviousIndex | null;
  /** Whether its analysed texts may be used (false for a forced build, which starts from nothing). */
  texts: boolean;
}

/** The search index of `docs` and the files that go with it, from the published snapshot's where they can be. */
export async function makeSearchIndex(
  docs: readonly SearchDoc[],
  previous: PreviousSearch | null,
): Promise<SearchIndexFiles> {
  // The index is the documents run through the index builder's code (tokenizer, stemmer, format): a change to any
  // of it (its digest, as for the render key) must not reuse an old index. No digest (no sources): no reuse.
  const indexCode = codeDigest([new URL("../search/index-builder.ts", import.meta.url)]);
  const docsDigest = digestDocs(docs, indexCode);
  const same = indexCode !== null && previous?.index?.docsDigest === docsDigest ? previous.index : null;
  if (same) {
    // The same documents have the same texts: the previous analysis goes with the index, if there is one.
    const texts = join(previous!.dir, SEARCH_TEXTS_FILE);
    const hasTexts = await stat(texts).then(
      (s) => s.isFile(),
      () => false,
    );
    return {
      index: same.bytes,
      docsDigest,
      reused: true,
      textsReused: 0,
      files: {},
      linked: { [SEARCH_INDEX_FILE]: same.path, ...(hasTexts ? { [SEARCH_TEXTS_FILE]: texts } : {}) },
    };
  }
  // Texts are taken only from a file made by the same analysis code; anything else is analysed anew.
  const code = searchTextsCode();
  const texts = (code !== null && previous?.texts ? await loadSearchTexts(previous.dir, code) : null) ?? new DocTexts();
  const index = buildSearchIndex(docs, texts);
  const used = texts.usedParts();
  return {
    index,
    docsDigest,
    reused: false,
    textsReused: used.keys.length - texts.analysed,
    files: {
      [SEARCH_INDEX_FILE]: index,
      ...(code !== null ? { [SEARCH_TEXTS_FILE]: encodeSearchTexts(used, code) } : {}),
    },
    linked: {},
  };
}

/** Characters of JSON hashed at a time by digestDocs. */
const DIGEST_CHUNK = 1 << 20;

/**
 * The documents' digest: sha256 of `${SEARCH_INDEX_VERSION}\0${indexCode}\0${JSON.stringify(docs)}`, hashed a
 * megabyte of JSON at a time rather than made into one string (at 1,000,000 sample products that string was 484
 * million characters, near V8's longest string of 536.9 million, and took a gigabyte with its UTF-8 copy).
 */
export function digestDocs(docs: readonly SearchDoc[], indexCode: string | null): string {
  const hash = createHash("sha256").update(`${SEARCH_INDEX_VERSION}\0${indexCode}\0[`);
  let chunk = "";
  for (let i = 0; i < docs.length; i++) {
    chunk += (i === 0 ? "" : ",") + JSON.stringify(docs[i]);
    if (chunk.length >= DIGEST_CHUNK) {
      hash.update(chunk);
      chunk = "";
    }
  }
  return hash.update(chunk + "]").digest("hex");
}
