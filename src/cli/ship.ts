// `npm run ship -- --to DIR|[user@]host:DIR [--data DIR] [--id ID] [--keep N] [--rsh CMD]`: copies a published
// snapshot to a replica's data directory, packs first and `current` last, so that a server there never sees half
// of it.
import { parseReplica, ReplicaError, shipSnapshot } from "../generate/ship.ts";
import { BuildLockedError } from "../generate/lock.ts";
import { DEFAULT_KEEP } from "../generate/publish.ts";
import { parseConfig } from "../config/api-settings.ts";
import { parseCommandLine, UsageError } from "./args.ts";

const USAGE = "usage: npm run ship -- --to DIR|[user@]host:DIR [--data DIR] [--id ID] [--keep N] [--rsh CMD]";

async function main(): Promise<number> {
  const { values, positionals } = parseCommandLine(
    {
      allowPositionals: true,
      options: {
        to: { type: "string" },
        data: { type: "string" },
        id: { type: "string" },
        keep: { type: "string" },
        rsh: { type: "string" },
      },
    },
    USAGE,
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"; ${USAGE}`);
  if (values.to === undefined) throw new UsageError(`--to is required; ${USAGE}`);
  try {
    parseReplica(values.to, "--to");
  } catch (err) {
    if (err instanceof ReplicaError) throw new UsageError(err.message);
    throw err;
  }
  const keep = values.keep === undefined ? DEFAULT_KEEP : Number(values.keep);
  if (!Number.isInteger(keep) || keep < 1)
    throw new UsageError(`--keep must be a whole number of at least 1, not "${values.keep}"`);
  if (values.id !== undefined && !/^[0-9A-Za-z-]{1,80}$/.test(values.id))
    throw new UsageError(`--id must be a snapshot ID (letters, digits and -), not "${values.id}"`);
  const config = parseConfig(process.env, { dataDir: values.data });
  const started = Date.now();
  try {
    const r = await shipSnapshot({
      dataDir: config.dataDir,
      to: values.to,
      keep,
      ...(values.id ? { id: values.id } : {}),
      ...(values.rsh ? { rsh: values.rsh } : {}),
    });
    console.log(
      `ship: ${r.id} is current in ${values.to}: ${r.copied} pack(s) copied, ${r.present} already there, ${(r.bytes / 1024 / 1024).toFixed(1)} MB in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return 0;
  } catch (err) {
    if (err instanceof BuildLockedError) {
      console.error(`ship skipped: ${values.to}: ${err.message}`);
      return 3;
    }
    throw err;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`ship: ${err.message}`);
      process.exit(2);
    }
    console.error(`ship failed: ${(err as Error).message ?? String(err)}; the replica's current snapshot is unchanged`);
    process.exit(1);
  },
);
