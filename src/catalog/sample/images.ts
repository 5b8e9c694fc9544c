// Image lists for sample products and sales: each picture at every size, on the retailer's CDN.
import type { Image } from "../schema.ts";

/** Where sample images live. */
const CDN_BASE = "https://cdn.example-retailer.com/images";

/** Product picture sizes, width x height (3:4, the same picture at each). */
const PRODUCT_IMAGE_SIZES: readonly (readonly [number, number])[] = [
  [91, 121],
  [300, 400],
  [420, 560],
];

/**
 * Sale image sizes, width x height: the sizes clients of the original API read from a sale's `image_urls`
 * (banners, tiles and thumbnails, so not one aspect ratio). The catalog format itself accepts any size.
 */
const SALE_IMAGE_SIZES: readonly (readonly [number, number])[] = [
  [744, 281],
  [636, 400],
  [455, 172],
  [370, 345],
  [300, 280],
  [300, 184],
  [140, 130],
  [100, 93],
];

/** `pictures` pictures of a product, each at every product size. */
export function productImages(productId: number, pictures: number): Image[] {
  const images: Image[] = [];
  for (let n = 1; n <= pictures; n++) {
    for (const [width, height] of PRODUCT_IMAGE_SIZES) {
      images.push({ url: `${CDN_BASE}/products/${productId}/${n}/${width}x${height}.jpg`, width, height });
    }
  }
  return images;
}

/** A sale's image at every sale size. */
export function saleImages(saleKey: string): Image[] {
  return SALE_IMAGE_SIZES.map(([width, height]) => ({
    url: `${CDN_BASE}/sales/${saleKey}/banner-${width}x${height}.jpg`,
    width,
    height,
  }));
}
