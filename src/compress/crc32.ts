// CRC-32 of a concatenation from the CRC-32s of its parts (zlib's crc32_combine, as GF(2) polynomial arithmetic):
// a search page's gzip trailer is worked out from its products' CRCs without reading their bytes again.

const POLY = 0xedb88320;

/** a * b mod p(x), bit-reflected as CRC-32 keeps its polynomials. */
function multmodp(a: number, b: number): number {
  if (a === 0) return 0; // the loop below ends on a's last set bit: it would never end without one
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** X2N[k] = x^(2^k) mod p(x). */
const X2N: number[] = [0x40000000];
for (let k = 1; k < 32; k++) X2N.push(multmodp(X2N[k - 1]!, X2N[k - 1]!));

/** The operator that appends `length` bytes to a CRC: x^(8 * length) mod p(x). Worth keeping per fixed-length part. */
export function crc32Shift(length: number): number {
  let p = 0x80000000; // x^0
  let k = 3; // 2^3 bits a byte
  for (let n = length; n > 0; n = Math.floor(n / 2), k++) if (n % 2 === 1) p = multmodp(X2N[k & 31]!, p);
  return p;
}

/** CRC-32 of A followed by B, from crc(A), crc(B) and crc32Shift(B's length). */
export function crc32Combine(crcA: number, crcB: number, shiftB: number): number {
  return (multmodp(shiftB, crcA) ^ crcB) >>> 0;
}
