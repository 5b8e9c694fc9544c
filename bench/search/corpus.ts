// Benchmark corpora: the sample catalog (products + sales NDJSON) turned into search docs, the way the build does.
import { createReadStream, existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { searchDoc } from "../../src/generate/plan.ts";
import type { Product, Sale, Store } from "../../src/catalog/schema.ts";
import type { SearchDoc } from "../../src/search/types.ts";

export interface Corpus {
  docs: SearchDoc[];
  /** The instant the catalog was generated around (epoch seconds): queries run at it. */
  now: number;
  source: string;
}

async function* lines(path: string): AsyncGenerator<string> {
  const rl = createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Infinity });
  for await (const line of rl) if (line.trim() !== "") yield line;
}

const seconds = (timestamp: string): number => Date.parse(timestamp) / 1000;

/** Reads a catalog directory: every product listed by some sale becomes a doc with that sale's window. */
export async function readCatalogDocs(dir: string): Promise<SearchDoc[]> {
  const windows = new Map<number, { from: number; to: number | null; store: Store }[]>();
  for await (const line of lines(join(dir, "sales.ndjson"))) {
    const sale = JSON.parse(line) as Sale;
    const w = {
      from: seconds(sale.begins),
      to: sale.ends === undefined ? null : seconds(sale.ends),
      store: sale.store,
    };
    for (const id of sale.product_ids) {
      let list = windows.get(id);
      if (!list) windows.set(id, (list = []));
      list.push(w);
    }
  }
  const docs: SearchDoc[] = [];
  for await (const line of lines(join(dir, "products.ndjson"))) {
    const p = JSON.parse(line) as Product;
    const productWindows = windows.get(p.id);
    if (!productWindows) continue;
    docs.push(searchDoc(p, productWindows));
  }
  return docs;
}

const SAMPLE_MODULE = fileURLToPath(new URL("../../src/catalog/sample/index.ts", import.meta.url));

interface SampleModule {
  writeSampleCatalog(dir: string, options: { seed: number; products: number; now: Date }): Promise<unknown>;
}

/** Generates the sample catalog (the project's own generator) into `dir` and reads it back as docs. */
export async function sampleCorpus(dir: string, products: number, seed: number, now: number): Promise<Corpus> {
  if (!existsSync(SAMPLE_MODULE)) throw new Error(`the sample catalog generator (${SAMPLE_MODULE}) is missing`);
  const sample = (await import(SAMPLE_MODULE)) as SampleModule;
  await mkdir(dir, { recursive: true });
  await sample.writeSampleCatalog(dir, { seed, products, now: new Date(now * 1000) });
  return { docs: await readCatalogDocs(dir), now, source: `sample generator, seed ${seed}` };
}
