// Little-endian byte writer and reader with LEB128 varints, for the search index file.
import { SearchIndexError } from "./index-error.ts";

/** Appends to a growing buffer. Varints take non-negative integers up to 2^53 - 1. */
export class ByteWriter {
  #buf = new Uint8Array(1 << 16);
  #view = new DataView(this.#buf.buffer);
  #len = 0;

  get length(): number {
    return this.#len;
  }

  #reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
    this.#view = new DataView(next.buffer);
  }

  varint(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`varint out of range: ${n}`);
    this.#reserve(8);
    let v = n;
    while (v >= 0x80) {
      this.#buf[this.#len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#len++] = v;
  }

  u32(n: number): void {
    this.#reserve(4);
    this.#view.setUint32(this.#len, n, true);
    this.#len += 4;
  }

  f64(n: number): void {
    this.#reserve(8);
    this.#view.setFloat64(this.#len, n, true);
    this.#len += 8;
  }

  bytes(b: Uint8Array): void {
    this.#reserve(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
  }

  /** A length-prefixed UTF-8 string. */
  string(s: string): void {
    const b = new TextEncoder().encode(s);
    this.varint(b.length);
    this.bytes(b);
  }

  /** The bytes written so far (a copy, exactly `length` long). */
  finish(): Uint8Array {
    return this.#buf.slice(0, this.#len);
  }
}

/** Reads what a {@link ByteWriter} wrote; running past the end is a {@link SearchIndexError}. */
export class ByteReader {
  readonly #buf: Uint8Array;
  readonly #view: DataView;
  pos: number;
  readonly end: number;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    this.#buf = buf;
    this.#view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = start;
    this.end = end;
  }

  #need(n: number): void {
    if (this.pos + n > this.end) throw new SearchIndexError("search index is corrupt: data ends early");
  }

  varint(): number {
    const buf = this.#buf;
    let b = buf[this.pos++] ?? 0x100;
    if (b < 0x80) {
      if (this.pos > this.end) this.#need(0);
      return b;
    }
    let result = 0;
    let scale = 1;
    for (let i = 0; ; i++) {
      if (this.pos > this.end || i > 7) throw new SearchIndexError("search index is corrupt: bad varint");
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
      b = buf[this.pos++] ?? 0x100;
    }
  }

  u32(): number {
    this.#need(4);
    const v = this.#view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  f64(): number {
    this.#need(8);
    const v = this.#view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  bytes(n: number): Uint8Array {
    this.#need(n);
    const b = this.#buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  string(): string {
    return new TextDecoder("utf-8", { fatal: true }).decode(this.bytes(this.varint()));
  }
}
