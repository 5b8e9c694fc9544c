// `npm run build -- --catalog DIR [--data DIR] [--base-url URL] [--keep N] [--force] [--every 5m] | rollback`
import { buildSnapshot } from "../generate/index.ts";
import { BuildLockedError } from "../generate/lock.ts";
import { DEFAULT_KEEP, rollback } from "../generate/publish.ts";
import { CatalogError } from "../catalog/problems.ts";
import { parseConfig } from "../config/api-settings.ts";
import { createProgress } from "./progress.ts";
import { parseInterval, summarize } from "./build-summary.ts";
import { parseCommandLine, UsageError } from "./args.ts";

const USAGE = `usage: npm run build -- --catalog DIR [--data DIR] [--base-url URL] [--keep N] [--force] [--every 5m]
       npm run build -- rollback [--data DIR]`;

async function main(): Promise<number> {
  const { values, positionals } = parseCommandLine(
    {
      allowPositionals: true,
      options: {
        catalog: { type: "string" },
        data: { type: "string" },
        "base-url": { type: "string" },
        keep: { type: "string" },
        force: { type: "boolean" },
        every: { type: "string" },
        verbose: { type: "boolean" },
      },
    },
    USAGE,
  );
  const config = parseConfig(process.env, { dataDir: values.data, baseUrl: values["base-url"] });
  if (positionals[0] === "rollback" && positionals.length === 1) {
    const { from, to } = await rollback(config.dataDir);
    console.log(`rollback: current is now ${to} (was ${from})`);
    return 0;
  }
  if (positionals.length > 0 || !values.catalog) {
    console.error(USAGE);
    return 2;
  }
  const keep = values.keep === undefined ? DEFAULT_KEEP : Number(values.keep);
  if (!Number.isInteger(keep) || keep < 1)
    throw new UsageError(`--keep must be a whole number of at least 1, not "${values.keep}"`);
  const every = values.every === undefined ? null : parseInterval(values.every);

  const once = async (): Promise<number> => {
    const progress = createProgress(process.stderr);
    const started = Date.now();
    let phase = "";
    const onProgress = (p: string, done: number, total: number) => {
      if (values.verbose && p !== phase)
        console.error(`build: ${((Date.now() - started) / 1000).toFixed(1)} s: ${(phase = p)}`);
      progress.update(p, done, total);
    };
    try {
      const result = await buildSnapshot({
        catalogDir: values.catalog!,
        dataDir: config.dataDir,
        baseUrl: config.baseUrl,
        portalUrl: config.portalUrl,
        keep,
        force: values.force ?? false,
        onProgress,
      });
      progress.done();
      if (values.verbose)
        for (const w of result.warnings.warnings)
          console.error(`warning: ${w.file}:${w.line}: ${w.field}: ${w.message}`);
      console.log(summarize(result));
      return 0;
    } catch (err) {
      progress.done();
      if (err instanceof CatalogError) {
        console.error(err.report());
        console.error(
          "build failed: the catalog has errors; nothing was written and the published snapshot is unchanged",
        );
        return 1;
      }
      if (err instanceof BuildLockedError) {
        console.error(`build skipped: ${err.message}`);
        return 3;
      }
      throw err;
    }
  };
  if (every === null) return once();
  // Scheduled: one build per interval, never two at once (the lock also guards against other processes).
  for (;;) {
    const started = Date.now();
    await once().catch((err: unknown) => console.error(`build failed: ${(err as Error).stack ?? String(err)}`));
    await new Promise((r) => setTimeout(r, Math.max(0, every - (Date.now() - started))));
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`build: ${err.message}`);
      process.exit(2);
    }
    console.error(`build failed: ${(err as Error).message ?? String(err)}`);
    process.exit(1);
  },
);
