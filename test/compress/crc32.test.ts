// CRC-32 combination: the CRC of a concatenation from its parts' CRCs equals zlib's CRC of the joined bytes.
import { randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { crc32Combine, crc32Shift } from "../../src/compress/crc32.ts";

describe("crc32Combine", () => {
  it.each([0, 1, 2, 7, 100, 1023, 4096, 65_537, 300_001])("matches zlib over A + B with B of %i bytes", (lengthB) => {
    for (const lengthA of [0, 1, 13, 5000]) {
      const a = randomBytes(lengthA);
      const b = randomBytes(lengthB);
      expect(crc32Combine(crc32(a) >>> 0, crc32(b) >>> 0, crc32Shift(b.length))).toBe(
        crc32(Buffer.concat([a, b])) >>> 0,
      );
    }
  });

  it("folds over many parts", () => {
    const parts = Array.from({ length: 50 }, (_, i) => randomBytes(i * 37 + 1));
    let crc = 0;
    for (const p of parts) crc = crc32Combine(crc, crc32(p) >>> 0, crc32Shift(p.length));
    expect(crc).toBe(crc32(Buffer.concat(parts)) >>> 0);
  });
});
