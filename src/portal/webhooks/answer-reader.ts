// A receiver's answer to a delivery, read as HTTP/1.1 bytes arrive (send.ts writes the request and feeds this the
// connection's bytes): the status line, the header lines up to HEAD_BYTES (interim 1xx heads skipped), then the body
// by Content-Length, by chunks, or until the connection closes; at most ANSWER_BYTES of it are kept. Strict where a
// lenient reading could be fooled (CRLF line ends, one Content-Length, not with Transfer-Encoding, no folded header
// lines, hex chunk sizes); the connection is reusable only after an answer read to its exact end within the bounds,
// with no byte after it, and neither side asking to close it.

/** How much of an answer's body is read (and kept in the attempts' log), bytes. */
const ANSWER_BYTES = 1024;
/** The most bytes of answer heads (status line and header lines, every interim head's and the trailers too). */
const HEAD_BYTES = 16 * 1024;

const EMPTY = Buffer.alloc(0);

type Stage = "head" | "length" | "size" | "chunk" | "chunk-end" | "trailers" | "until-close" | "done";

/** One answer's reading. `status` is 0 until its (final) head was read. */
export class AnswerReader {
  status = 0;
  /** Whether the connection may carry another request once `done`. */
  reusable = false;
  /** The receiver's idle limit for the connection (its Keep-Alive: timeout=), ms; null when it said none. */
  keepAliveMs: number | null = null;
  /** Why the answer could not be read (a malformed or oversized answer), once it could not. */
  error: string | null = null;
  /** Whether any byte of the answer arrived. */
  started = false;
  private stage: Stage = "head";
  /** Bytes held from earlier chunks (an unfinished head or line), at the start of a buffer grown by doubling. */
  private held: Buffer = EMPTY;
  private heldLength = 0;
  /** How many of the held bytes were looked through for a line's end already (each is looked at once). */
  private scanned = 0;
  private headBytes = 0;
  /** Body bytes still to come in the message (Content-Length) or in the chunk. */
  private left = 0;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;

  /** Whether the answer was read as far as it will be (its end, or ANSWER_BYTES of its body), or failed. */
  get done(): boolean {
    return this.stage === "done";
  }

  /** The body's first bytes, as text. */
  get answer(): string {
    return Buffer.concat(this.kept).subarray(0, ANSWER_BYTES).toString("utf8");
  }

  /** Reads `chunk`, the next bytes of the connection. */
  push(chunk: Buffer): void {
    if (this.stage === "done") {
      this.reusable = false; // bytes after the answer: the connection's next answer would not be this sender's
      return;
    }
    this.started = true;
    let data = chunk;
    let scanned = 0;
    if (this.heldLength > 0) {
      data = this.grow(this.heldLength + chunk.length);
      chunk.copy(data, this.heldLength);
      this.heldLength = 0;
      scanned = this.scanned;
    }
    while (data.length > 0 && !this.done) {
      data = this.step(data, scanned);
      scanned = 0;
    }
    if (this.done && data.length > 0) this.reusable = false;
  }

  /** The connection closed: the end of a body read until then, or an answer cut short. */
  end(): void {
    if (this.stage === "done") return;
    if (this.stage === "until-close") return this.finish(false);
    this.fail(this.status === 0 ? "socket hang up" : "the answer was cut short");
  }

  private fail(why: string): void {
    this.error ??= why;
    this.finish(false);
  }

  private finish(reusable: boolean): void {
    this.stage = "done";
    this.reusable = reusable && this.reusable;
    this.held = EMPTY;
    this.heldLength = 0;
  }

  /** The held bytes in a buffer of at least `length` bytes (the held ones at its start); `length` of it. */
  private grow(length: number): Buffer {
    if (length > this.held.length) {
      const grown = Buffer.allocUnsafe(Math.max(length, 2 * this.held.length, 256));
      this.held.copy(grown, 0, 0, this.heldLength);
      this.held = grown;
    }
    return this.held.subarray(0, length);
  }

  /** Holds `data` (what is left of the bytes read, an unfinished head or line) for the next chunk. */
  private hold(data: Buffer): Buffer {
    const inPlace = data.buffer === this.held.buffer && data.byteOffset === this.held.byteOffset;
    if (!inPlace) {
      this.heldLength = 0;
      const copy = Buffer.from(data); // data may be a view of `held` itself
      copy.copy(this.grow(copy.length));
    }
    this.scanned = data.length;
    this.heldLength = data.length;
    return EMPTY;
  }

  /** Where `separator` begins in `data`, or -1; its first `scanned` bytes were looked through before. */
  private static find(data: Buffer, separator: string, scanned: number): number {
    return data.indexOf(separator, Math.max(0, scanned - separator.length + 1), "latin1");
  }

  /** Keeps up to ANSWER_BYTES of the body; true once they are kept (the rest is not read). */
  private keep(part: Buffer): boolean {
    if (this.keptBytes < ANSWER_BYTES) {
      this.kept.push(part.subarray(0, ANSWER_BYTES - this.keptBytes));
      this.keptBytes += Math.min(part.length, ANSWER_BYTES - this.keptBytes);
    }
    return this.keptBytes >= ANSWER_BYTES;
  }

  /** A line (CRLF-ended) from the start of `data`, or null when it has not all arrived (kept for the next bytes). */
  private line(data: Buffer, scanned: number, limit: number): { text: string; rest: Buffer } | null {
    const at = AnswerReader.find(data, "\r\n", scanned);
    if (at < 0) {
      if (data.length > limit) this.fail("an answer line over its bound");
      else this.hold(data);
      return null;
    }
    if (at > limit) return (this.fail("an answer line over its bound"), null);
    return { text: data.toString("latin1", 0, at), rest: data.subarray(at + 2) };
  }

  /** Reads what `data` holds of the current stage (its first `scanned` bytes looked through before); returns the
   * bytes left for the next. */
  private step(data: Buffer, scanned: number): Buffer {
    switch (this.stage) {
      case "head": {
        const end = AnswerReader.find(data, "\r\n\r\n", scanned);
        if (end < 0) {
          if (this.headBytes + data.length > HEAD_BYTES) this.fail(`an answer head over ${HEAD_BYTES} bytes`);
          else this.hold(data);
          return EMPTY;
        }
        this.headBytes += end + 4;
        if (this.headBytes > HEAD_BYTES) return (this.fail(`an answer head over ${HEAD_BYTES} bytes`), data);
        this.head(data.toString("latin1", 0, end));
        return data.subarray(end + 4);
      }
      case "length": {
        const part = data.subarray(0, this.left);
        this.left -= part.length;
        if (this.keep(part) && this.left > 0) this.finish(false);
        else if (this.left === 0) this.finish(true);
        return data.subarray(part.length);
      }
      case "size": {
        const line = this.line(data, scanned, 64);
        if (!line) return EMPTY;
        const size = /^([0-9a-fA-F]{1,12})(?:[ \t]*;.*)?$/.exec(line.text)?.[1];
        if (size === undefined) return (this.fail("a bad chunk size"), data);
        this.left = parseInt(size, 16);
        this.stage = this.left === 0 ? "trailers" : "chunk";
        return line.rest;
      }
      case "chunk": {
        const part = data.subarray(0, this.left);
        this.left -= part.length;
        if (this.keep(part)) this.finish(false);
        else if (this.left === 0) this.stage = "chunk-end";
        return data.subarray(part.length);
      }
      case "chunk-end": {
        if (data.length < 2) return this.hold(data);
        if (data[0] !== 0x0d || data[1] !== 0x0a) return (this.fail("a chunk without its CRLF"), data);
        this.stage = "size";
        return data.subarray(2);
      }
      case "trailers": {
        const line = this.line(data, scanned, HEAD_BYTES - this.headBytes);
        if (!line) return EMPTY;
        this.headBytes += line.text.length + 2;
        if (line.text === "") this.finish(true);
        return line.rest;
      }
      case "until-close":
        if (this.keep(data)) this.finish(false);
        return EMPTY;
      case "done":
        return data;
    }
  }

  /** Reads a head (without its blank line): the status and what decides how the body is read. */
  private head(text: string): void {
    const lines = text.split("\r\n");
    const status = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/.exec(lines[0]!);
    if (!status) return this.fail("a bad status line");
    const code = Number(status[2]);
    if (code < 100) return this.fail("a bad status line");
    let length: string | null = null;
    let chunked = false;
    let encoded = false;
    let close = status[1] === "0";
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).toLowerCase();
      if (colon <= 0 || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) return this.fail("a bad header line");
      const value = line.slice(colon + 1).trim();
      if (name === "content-length") {
        if (!/^\d{1,15}$/.test(value) || (length !== null && length !== value))
          return this.fail("a bad Content-Length");
        length = value;
      } else if (name === "transfer-encoding") {
        encoded = true;
        chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      } else if (name === "connection") {
        if (/(?:^|,)\s*close\s*(?:,|$)/i.test(value)) close = true;
        else if (status[1] === "0" && /(?:^|,)\s*keep-alive\s*(?:,|$)/i.test(value)) close = false;
      } else if (name === "keep-alive") {
        const timeout = /(?:^|,)\s*timeout=(\d+)/i.exec(value)?.[1];
        if (timeout !== undefined) this.keepAliveMs = Number(timeout) * 1000;
      }
    }
    if (code < 200) {
      if (code === 101) return this.fail("an upgrade not asked for");
      this.keepAliveMs = null;
      return; // an interim answer (100 Continue, 103 Early Hints): the final one follows
    }
    if (encoded && length !== null) return this.fail("both Content-Length and Transfer-Encoding");
    this.status = code;
    this.reusable = !close;
    if (code === 204 || code === 304 || (length !== null && Number(length) === 0)) return this.finish(true);
    if (chunked) this.stage = "size";
    else if (length !== null) {
      this.stage = "length";
      this.left = Number(length);
    } else {
      this.stage = "until-close";
      this.reusable = false;
    }
  }
}
