// CLI: writes the deterministic sample catalog. `tsx src/cli/sample.ts --out DIR [--seed N] [--products N] [--now ISO]`
import { parseCommandLine, UsageError } from "./args.ts";
import {
  DEFAULT_SAMPLE_PRODUCTS,
  DEFAULT_SAMPLE_SEED,
  MAX_SAMPLE_PRODUCTS,
  writeSampleCatalog,
} from "../catalog/sample/index.ts";

const USAGE = `usage: tsx src/cli/sample.ts --out DIR [--seed N] [--products N] [--now ISO]

Writes a deterministic sample catalog (catalog.json, sales.ndjson, products.ndjson) into DIR.
  --out DIR        catalog directory to write (created if missing; those three files are replaced)
  --seed N         random seed, an integer 0..4294967295 (default ${DEFAULT_SAMPLE_SEED})
  --products N     number of products, 1..${MAX_SAMPLE_PRODUCTS} (default ${DEFAULT_SAMPLE_PRODUCTS})
  --now ISO        instant the sales are arranged around, RFC 3339 like 2026-11-22T17:00:00Z (default: now)
Same seed, products and now give byte-identical files.`;

interface Args {
  out: string;
  seed: number;
  products: number;
  now: Date;
}

function parse(argv: string[]): Args | "help" {
  const { values } = parseCommandLine({
    args: argv,
    allowPositionals: false,
    options: {
      out: { type: "string" },
      seed: { type: "string" },
      products: { type: "string" },
      now: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  if (values.out === undefined || values.out.trim() === "") throw new UsageError("--out DIR is required");
  return {
    out: values.out,
    seed: parseInteger("--seed", values.seed, DEFAULT_SAMPLE_SEED, 0, 0xffffffff),
    products: parseInteger("--products", values.products, DEFAULT_SAMPLE_PRODUCTS, 1, MAX_SAMPLE_PRODUCTS),
    now: parseNow(values.now),
  };
}

function parseInteger(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, not "${text}"`);
  }
  return value;
}

function parseNow(text: string | undefined): Date {
  if (text === undefined) return new Date();
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text);
  const date = new Date(text);
  if (!ok || Number.isNaN(date.getTime()))
    throw new UsageError(`--now must be an RFC 3339 timestamp like 2026-11-22T17:00:00Z, not "${text}"`);
  return date;
}

async function main(): Promise<void> {
  let args: Args | "help";
  try {
    args = parse(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`sample: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (args === "help") {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const started = process.hrtime.bigint();
  const summary = await writeSampleCatalog(args.out, { seed: args.seed, products: args.products, now: args.now });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const mb = (summary.bytes / 1e6).toFixed(1);
  process.stdout.write(
    `sample: wrote ${args.out}: ${summary.sales} sales (${summary.active} active, ${summary.upcoming} upcoming, ${summary.ended} ended), ` +
      `${summary.products} products, ${summary.skus} SKUs, ${mb} MB, seed ${args.seed}, now ${args.now.toISOString()}, in ${seconds.toFixed(1)} s\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`sample: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
