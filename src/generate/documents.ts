// The documents a snapshot serves without a key: the OpenAPI document (made on every build, in a few hundred ms) and
// its reference page (rendered by Redocly in seconds, so reused from the published snapshot or a cache whenever
// everything that decides its bytes is the same), each with its gzip and brotli.
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import zlib from "node:zlib";
import { renderDocsPage } from "../api/docs-page.ts";
import { sampleExamples } from "./sample-examples.ts";
import { createOpenApiDocument } from "../api/openapi.ts";
import { REDOCLY_VERSION } from "../api/redocly.ts";
import { endpointById } from "../api/routing.ts";
import { sha256Hex } from "../snapshot/format.ts";
import type { Manifest } from "../snapshot/format.ts";
import { codeDigest } from "./code-digest.ts";

const OPENAPI_FILE = endpointById("getOpenApiDocument").file!.name;
const PAGE_FILE = endpointById("getReferencePage").file!.name;
const VARIANTS = ["", ".gz", ".br"] as const;

/** The documents' files: to write (bytes), or to hard-link from where they already are (paths). */
export interface DocumentFiles {
  files: Record<string, Buffer>;
  linked: Record<string, string>;
  /** The sha256 of every one of them, for the manifest's `files`. */
  digests: Record<string, string>;
  /** The page's digest, for the manifest (docs_page_digest). */
  pageDigest: string;
  /** Whether the page was reused rather than rendered. */
  pageReused: boolean;
}

export interface DocumentOptions {
  /** The API's public base URL, no trailing slash. */
  baseUrl: string;
  /** The developer portal's public URL, no trailing slash; undefined: none (the operator issues keys). */
  portalUrl?: string | undefined;
  /** The published snapshot's directory and manifest, when there is one. */
  previous: { dir: string; manifest: Manifest } | null;
  /** A directory of rendered pages by digest, shared by builds (tests use one). Default: none. */
  docsCacheDir?: string | undefined;
}

/** The OpenAPI document and reference page for `baseUrl`, with their variants. */
export async function makeDocuments({
  baseUrl,
  portalUrl,
  previous,
  docsCacheDir: cacheDir,
}: DocumentOptions): Promise<DocumentFiles> {
  const document = Buffer.from(
    JSON.stringify(createOpenApiDocument({ baseUrl, portalUrl, examples: await sampleExamples(baseUrl) })),
  );
  const files: Record<string, Buffer> = { [OPENAPI_FILE]: document, ...variantsOf(OPENAPI_FILE, document, 11) };
  // The page is the document run through the page's code and the Redocly CLI: a change to any of them renders it anew.
  // (The portal's URL, which the page's banner links to, is in the document's guide too.)
  const code = codeDigest([new URL("../api/docs-page.ts", import.meta.url)]);
  const pageDigest = sha256Hex(`${code}\0${REDOCLY_VERSION}\0${sha256Hex(document)}`);
  const names = VARIANTS.map((v) => `${PAGE_FILE}${v}`);
  const digestsOf = (written: Record<string, Buffer>) =>
    Object.fromEntries(Object.entries(written).map(([name, bytes]) => [name, sha256Hex(bytes)]));
  const recorded = previous?.manifest.files as Record<string, string> | undefined;
  if (code !== null && previous && recorded && previous.manifest.docs_page_digest === pageDigest) {
    const linked = Object.fromEntries(names.map((n) => [n, join(previous.dir, n)]));
    const digests = { ...digestsOf(files), ...Object.fromEntries(names.map((n) => [n, recorded[n]!])) };
    return { files, linked, digests, pageDigest, pageReused: true };
  }
  const cached = code !== null && cacheDir ? await readCached(cacheDir, pageDigest) : null;
  const page = cached ?? (await renderPage(document, portalUrl));
  if (!cached && code !== null && cacheDir) await writeCached(cacheDir, pageDigest, page);
  const all = { ...files, ...page };
  return { files: all, linked: {}, digests: digestsOf(all), pageDigest, pageReused: cached !== null };
}

/** The page and its variants, rendered anew. */
async function renderPage(document: Buffer, portalUrl: string | undefined): Promise<Record<string, Buffer>> {
  const page = await renderDocsPage(document, "Flash-sale API reference", portalUrl);
  // Brotli's quality 9: 11 took 8 s for the 2.6 MB page to save another 11% (545 KB against 613 KB).
  return { [PAGE_FILE]: page, ...variantsOf(PAGE_FILE, page, 9) };
}

/** A document's gzip and brotli, under their file names. */
function variantsOf(file: string, body: Buffer, brotliQuality: number): Record<string, Buffer> {
  const { constants } = zlib;
  return {
    [`${file}.gz`]: zlib.gzipSync(body, { level: 9 }),
    [`${file}.br`]: zlib.brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: brotliQuality,
        [constants.BROTLI_PARAM_LGWIN]: 24,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
  };
}

async function readCached(dir: string, digest: string): Promise<Record<string, Buffer> | null> {
  try {
    const entries = await Promise.all(
      VARIANTS.map(async (v) => [`${PAGE_FILE}${v}`, await readFile(join(dir, `${digest}${v}`))] as const),
    );
    // Written under the digest of their sources, so what is there is right if it is whole: the body is checked.
    const body = entries[0]![1];
    const recorded = await readFile(join(dir, `${digest}.sha256`), "utf8");
    return sha256Hex(body) === recorded ? Object.fromEntries(entries) : null;
  } catch {
    return null;
  }
}

/** Each file written under a temporary name and renamed, the body's digest last: a reader never sees half a page. */
async function writeCached(dir: string, digest: string, files: Record<string, Buffer>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const put = async (name: string, bytes: Buffer | string) => {
    const tmp = join(dir, `.tmp-${process.pid}-${name}`);
    await writeFile(tmp, bytes);
    await rename(tmp, join(dir, name));
  };
  for (const v of VARIANTS) await put(`${digest}${v}`, files[`${PAGE_FILE}${v}`]!);
  await put(`${digest}.sha256`, sha256Hex(files[PAGE_FILE]!));
}
