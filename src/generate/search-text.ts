// The analysed text of the search documents (src/search/doc-texts.ts), kept beside each snapshot's index so that the
// next build tokenizes only the texts that changed. A build-side cache: the server never reads it.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import type { DocTextParts } from "../search/doc-texts.ts";
import { DocTexts, TEXT_KEY_BYTES } from "../search/doc-texts.ts";
import { codeDigest } from "./code-digest.ts";

/** The file, in each snapshot directory. Not in the manifest: it checks itself (CRC-32) and is only ever an aid. */
export const SEARCH_TEXTS_FILE = "search-texts.bin";

const MAGIC = "FSTX";
/** Bumped with any change to the layout below. */
const VERSION = 1;

// Layout: "FSTX" | u32 version | u32 CRC-32 of the rest | then each part as a u32 count followed by its bytes, padded
// to 4: the code digest (ASCII), terms and surfaces (UTF-8, joined by "\n"), surface terms (u32s), keys
// (TEXT_KEY_BYTES latin1 bytes each), offsets (u32s), data (u32s). u32s are in the machine's byte order, the version
// too: a file from a machine of the other order is refused as of another version.

/**
 * What decides an entry's numbers: the digest of the code (this module, the analysis and the tokenizer it uses;
 * code-digest.ts) and the Node.js version, whose Unicode tables the tokenizer's folding and word pattern use.
 * Entries are only taken from a file made under the same key. null: take none.
 */
export function searchTextsCode(): string | null {
  const code = codeDigest([new URL("./search-text.ts", import.meta.url)]);
  return code === null ? null : `${code} node ${process.version}`;
}

/** The file's bytes for the texts the build used (DocTexts.usedParts), under `code` (searchTextsCode). */
export function encodeSearchTexts(parts: DocTextParts, code: string): Buffer {
  const chunks: Buffer[] = [];
  const part = (count: number, bytes: Uint8Array) => {
    const head = Buffer.alloc(4);
    head.writeUInt32LE(count);
    chunks.push(head, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), Buffer.alloc(-bytes.length & 3));
  };
  const text = (s: string) => {
    const bytes = Buffer.from(s, "utf8");
    part(bytes.length, bytes);
  };
  const u32s = (a: Uint32Array) => part(a.length, new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  text(code);
  text(parts.terms.join("\n"));
  text(parts.surfaces.join("\n"));
  u32s(parts.surfaceTerms);
  part(parts.keys.length, Buffer.from(parts.keys.join(""), "latin1"));
  u32s(parts.offsets);
  u32s(parts.data);
  const body = Buffer.concat(chunks);
  const head = Buffer.alloc(12);
  head.write(MAGIC, 0, "latin1");
  new Uint32Array(head.buffer, head.byteOffset + 4, 1)[0] = VERSION;
  head.writeUInt32LE(crc32(body), 8);
  return Buffer.concat([head, body]);
}

/**
 * The texts a file holds, when it was made under `code` and is whole: null when it is missing, damaged, of
 * another version or code, or not as its layout says.
 */
export function decodeSearchTexts(bytes: Buffer, code: string): DocTexts | null {
  if (bytes.length < 12 || bytes.toString("latin1", 0, 4) !== MAGIC) return null;
  if (new Uint32Array(bytes.buffer.slice(bytes.byteOffset + 4, bytes.byteOffset + 8))[0] !== VERSION) return null;
  if (crc32(bytes.subarray(12)) !== bytes.readUInt32LE(8)) return null;
  let pos = 12;
  const part = (width: number): { count: number; bytes: Buffer } | null => {
    if (pos + 4 > bytes.length) return null;
    const count = bytes.readUInt32LE(pos);
    const length = count * width;
    if (pos + 4 + length > bytes.length) return null;
    const out = { count, bytes: bytes.subarray(pos + 4, pos + 4 + length) };
    pos += 4 + length + (-length & 3);
    return out;
  };
  const text = () => part(1)?.bytes.toString("utf8") ?? null;
  // Views of the file's bytes where they are aligned (the reader copies what it keeps), else copies.
  const u32s = () => {
    const p = part(4);
    if (!p) return null;
    const { buffer, byteOffset, length } = p.bytes;
    return byteOffset % 4 === 0
      ? new Uint32Array(buffer, byteOffset, length / 4)
      : new Uint32Array(buffer.slice(byteOffset, byteOffset + length));
  };
  if (text() !== code) return null;
  const terms = text();
  const surfaces = text();
  const surfaceTerms = u32s();
  const keyBytes = part(TEXT_KEY_BYTES);
  const offsets = u32s();
  const data = u32s();
  if (terms === null || surfaces === null || !surfaceTerms || !keyBytes || !offsets || !data) return null;
  if (pos !== bytes.length) return null;
  const keys = Array.from({ length: keyBytes.count }, (_, i) =>
    keyBytes.bytes.toString("latin1", i * TEXT_KEY_BYTES, (i + 1) * TEXT_KEY_BYTES),
  );
  const parts: DocTextParts = {
    terms: terms === "" ? [] : terms.split("\n"),
    surfaces: surfaces === "" ? [] : surfaces.split("\n"),
    surfaceTerms,
    keys,
    offsets,
    data,
  };
  return wellFormed(parts) ? new DocTexts(parts) : null;
}

/** Terms and surfaces unique, every entry inside the data and every id it holds in range. */
function wellFormed({ terms, surfaces, surfaceTerms, keys, offsets, data }: DocTextParts): boolean {
  if (surfaceTerms.length !== surfaces.length || offsets.length !== keys.length) return false;
  if (new Set(terms).size !== terms.length || new Set(surfaces).size !== surfaces.length) return false;
  for (const t of surfaceTerms) if (t >= terms.length) return false;
  for (const at of offsets) {
    if (at + 3 > data.length) return false;
    const s0 = at + 3 + 2 * data[at + 2]!;
    if (s0 + 1 > data.length || s0 + 1 + data[s0]! > data.length) return false;
    for (let p = at + 3; p < s0; p += 2) if (data[p]! >= terms.length) return false;
    for (let p = s0 + 1; p <= s0 + data[s0]!; p++) if (data[p]! >= surfaces.length) return false;
  }
  return true;
}

/** The texts of the file in snapshot directory `dir`, or null (see decodeSearchTexts). */
export async function loadSearchTexts(dir: string, code: string): Promise<DocTexts | null> {
  const bytes = await readFile(join(dir, SEARCH_TEXTS_FILE)).catch(() => null);
  return bytes && decodeSearchTexts(bytes, code);
}
