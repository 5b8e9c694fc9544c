// `npm run usage -- varnish [-n <instance>]` and `npm run usage -- nginx <access log>`: count the requests the shipped
// front answers itself (from its cache, or its 429s) against their keys' names (src/usage/cache-log.ts) and hand
// them to the usage store (DATABASE_URL) as the API servers do. Run it on each front's machine, beside the front.
import { parseConfig } from "../config/api-settings.ts";
import { describeError } from "../errors.ts";
import { followNginx, followVarnish } from "../usage/cache-log.ts";
import type { LogFollower } from "../usage/cache-log.ts";
import { startUsage } from "../usage/hand-over.ts";
import { parseCommandLine, UsageError } from "./args.ts";

const USAGE = "npm run usage -- varnish [-n <varnishd instance name>] | nginx <its flash_sale_api access log>";

function main(): void {
  const { positionals, values } = parseCommandLine(
    { args: process.argv.slice(2), allowPositionals: true, options: { n: { type: "string" } } },
    USAGE,
  );
  const [front, file] = positionals;
  const valid =
    (front === "varnish" && positionals.length === 1) ||
    (front === "nginx" && positionals.length === 2 && values.n === undefined);
  if (!valid) throw new UsageError(USAGE);
  const config = parseConfig(process.env);
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
  const onExit = (program: string) => (code: number | null, stderr: string) => {
    if (stopping) return;
    console.error(`usage: ${program} exited (${code}): ${stderr.trim()}`);
    void usage.close().then(() => process.exit(1));
  };
  let follower: LogFollower;
  if (front === "varnish") {
    follower = followVarnish({
      program: config.varnishncsa,
      ...(values.n ? { instance: values.n } : {}),
      meter: usage.meter,
      now: Date.now,
      onExit: onExit("varnishncsa"),
    });
    console.error(`usage: counting what Varnish answers itself${values.n ? ` (instance ${values.n})` : ""} per key`);
  } else {
    follower = followNginx({ program: "tail", file: file!, meter: usage.meter, now: Date.now, onExit: onExit("tail") });
    console.error(`usage: counting what nginx answers itself per key, from ${file}`);
  }
  const stop = () => {
    stopping = true;
    follower.stop();
    void usage.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

try {
  main();
} catch (err) {
  console.error(`usage: ${(err as Error).message ?? String(err)}`);
  process.exit(err instanceof UsageError ? 2 : 1);
}
