// The portal's icon (/favicon.ico): a white lightning bolt on the portal's navy, drawn here at start-up as a 32x32 ICO
// (one 32-bit BMP image, which needs no compression or checksum), so that no binary file is kept in the repository.
// The reference page (src/api/docs-page.ts) shows the same bolt as an SVG, with the polygon BOLT.

const SIZE = 32;
/** The header's navy (static-files.ts), as red, green, blue. */
const NAVY = [0x12, 0x35, 0x5b] as const;
/** The bolt's corners on the 32x32 grid, as the SVG's polygon has them. */
const BOLT: readonly (readonly [number, number])[] = [
  [19, 3],
  [8, 18],
  [15, 18],
  [12, 29],
  [24, 13],
  [17, 13],
  [21, 3],
];
/** The corners' radius of the navy square. */
const RADIUS = 6;
/** Samples a side of a pixel, for smooth edges. */
const SAMPLES = 4;

/** Whether (x, y) lies inside `polygon` (even-odd rule). */
function inside(x: number, y: number, polygon: readonly (readonly [number, number])[]): boolean {
  let odd = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i]!;
    const [xj, yj] = polygon[j]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) odd = !odd;
  }
  return odd;
}

/** Whether (x, y) lies inside the rounded square. */
function inSquare(x: number, y: number): boolean {
  const cx = Math.min(Math.max(x, RADIUS), SIZE - RADIUS);
  const cy = Math.min(Math.max(y, RADIUS), SIZE - RADIUS);
  return (x - cx) ** 2 + (y - cy) ** 2 <= RADIUS ** 2;
}

/** The icon's bytes: an ICO directory of one image, a BMP (bottom-up BGRA rows, then an all-clear AND mask). */
function renderFavicon(): Uint8Array<ArrayBuffer> {
  const pixels = SIZE * SIZE * 4;
  const mask = SIZE * 4; // 1 bit a pixel, rows padded to 4 bytes
  const dib = Buffer.alloc(40 + pixels + mask);
  dib.writeUInt32LE(40, 0); // BITMAPINFOHEADER
  dib.writeInt32LE(SIZE, 4);
  dib.writeInt32LE(SIZE * 2, 8); // the image and its mask
  dib.writeUInt16LE(1, 12);
  dib.writeUInt16LE(32, 14);
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      let square = 0;
      let bolt = 0;
      for (let sy = 0; sy < SAMPLES; sy++)
        for (let sx = 0; sx < SAMPLES; sx++) {
          const [px, py] = [x + (sx + 0.5) / SAMPLES, y + (sy + 0.5) / SAMPLES];
          if (inSquare(px, py)) square++;
          if (inside(px, py, BOLT)) bolt++;
        }
      const [n, white] = [SAMPLES * SAMPLES, bolt / (SAMPLES * SAMPLES)];
      const at = 40 + ((SIZE - 1 - y) * SIZE + x) * 4;
      const [r, g, b] = NAVY.map((c) => Math.round(c + (255 - c) * white));
      dib[at] = b!;
      dib[at + 1] = g!;
      dib[at + 2] = r!;
      dib[at + 3] = Math.round((255 * square) / n);
    }
  }
  const head = Buffer.alloc(6 + 16);
  head.writeUInt16LE(1, 2); // an icon
  head.writeUInt16LE(1, 4); // of one image
  head[6] = SIZE;
  head[7] = SIZE;
  head.writeUInt16LE(1, 10); // colour planes
  head.writeUInt16LE(32, 12); // bits a pixel
  head.writeUInt32LE(dib.length, 14);
  head.writeUInt32LE(head.length, 18);
  return new Uint8Array(Buffer.concat([head, dib])); // a copy on an ArrayBuffer of its own, as Response bodies take
}

/** /favicon.ico's body. */
export const FAVICON = renderFavicon();
