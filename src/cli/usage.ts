// `npm run usage -- varnish [-n <instance>]`: counts the requests Varnish answers from its cache against their keys
// (src/usage/cache-log.ts) and hands them to the usage store (DATABASE_URL) as the API servers do. Run it on each
// Varnish machine, beside varnishd.
import { watchFile } from "node:fs";
import { parseConfig } from "../config.ts";
import { describeError } from "../errors.ts";
import { loadKeyRing } from "../serve/keys.ts";
import { followVarnish } from "../usage/cache-log.ts";
import { startUsage } from "../usage/hand-over.ts";
import { parseCommandLine, UsageError } from "./args.ts";

const USAGE = "usage: npm run usage -- varnish [-n <varnishd instance name>]";
/** How often the keys file is checked for changes (a new key's hits are counted from then on), ms. */
const KEYS_POLL_MS = 1000;

async function main(): Promise<void> {
  const { positionals, values } = parseCommandLine(
    { args: process.argv.slice(2), allowPositionals: true, options: { n: { type: "string" } } },
    USAGE,
  );
  if (positionals.length !== 1 || positionals[0] !== "varnish") throw new UsageError(USAGE);
  const config = parseConfig(process.env);
  let keys = await loadKeyRing(config.keysFile);
  watchFile(config.keysFile, { interval: KEYS_POLL_MS }, () => {
    loadKeyRing(config.keysFile).then(
      (ring) => (keys = ring),
      (err: unknown) => console.error(`usage: keys file not reloaded (${describeError(err).message})`),
    );
  });
  const usage = startUsage({
    databaseUrl: config.databaseUrl,
    flushMs: config.usageFlushMs,
    maxRows: config.usageBufferRows,
    figuresTtlMs: 0,
    now: Date.now,
    onUnavailable: (err) =>
      console.error(`usage: the usage store cannot be reached (${describeError(err).message}); counts are kept here`),
    onAvailable: () => console.error("usage: the usage store answers again"),
  });
  let stopping = false;
  const follower = followVarnish({
    program: process.env.VARNISHNCSA ?? "varnishncsa",
    ...(values.n ? { instance: values.n } : {}),
    keys: () => keys,
    meter: usage.meter,
    now: Date.now,
    onExit: (code, stderr) => {
      if (stopping) return;
      console.error(`usage: varnishncsa exited (${code}): ${stderr.trim()}`);
      void usage.close().then(() => process.exit(1));
    },
  });
  console.error(`usage: counting Varnish's cache hits${values.n ? ` (instance ${values.n})` : ""} per key`);
  const stop = () => {
    stopping = true;
    follower.stop();
    void usage.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err: unknown) => {
  console.error(`usage: ${(err as Error).message ?? String(err)}`);
  process.exit(err instanceof UsageError ? 2 : 1);
});
