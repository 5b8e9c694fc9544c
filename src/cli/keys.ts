// `npm run keys -- create | set | rotate | revoke | list`: manages the API keys file (hashes only) so nobody edits it by
// hand; with KEYS_SYNC=shared, the keys every machine shares through Redis (and this machine's copy of them).
import { parseConfig } from "../config/api-settings.ts";
import { parseCommandLine, UsageError } from "./args.ts";
import type { KeyRecord, Limits } from "../keys/keys-file.ts";
import {
  createKey,
  graceUntil,
  KeyInputError,
  KeysFileError,
  loadKeysFile,
  revokeKey,
  rotateKey,
  setKeyLimits,
} from "../keys/keys-file.ts";
import { KeysLockedError } from "../keys/keys-lock.ts";
import { KeysUnavailableError } from "../keys/keys-store.ts";
import { startKeySyncFor } from "./start-key-sync.ts";

const USAGE =
  "usage: npm run keys -- create <name> [--rate N] [--burst N] | set <name> [--rate N] [--burst N] [--default] | rotate <name> [--grace 24h] | revoke <name> | list";
/** How long a key replaced by `rotate` keeps working unless --grace says otherwise. */
const DEFAULT_GRACE = "24h";
const MAX_GRACE_MS = 365 * 86_400_000;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Bad input: one line on stderr, exit code 2. */

/** `30s`, `15m`, `24h`, `7d` or `0` (the old key is refused at once), in ms. */
function parseGrace(text: string): number {
  const m = /^(0|[1-9][0-9]{0,5})(s|m|h|d)?$/.exec(text);
  if (!m || (m[1] !== "0" && !m[2]))
    throw new UsageError(`--grace: "${text}" is not a duration like 30m, 24h or 7d (or 0)`);
  const ms = Number(m[1]) * UNIT_MS[(m[2] ?? "s") as keyof typeof UNIT_MS];
  if (ms > MAX_GRACE_MS) throw new UsageError(`--grace: "${text}" is longer than 365 days`);
  return ms;
}

function parseRate(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const rate = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?$/i.test(text) ? Number(text) : NaN;
  if (!(Number.isFinite(rate) && rate > 0))
    throw new UsageError(`--rate: "${text}" is not a positive number of requests a second`);
  return rate;
}

function parseBurst(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const burst = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(Number.isSafeInteger(burst) && burst >= 1))
    throw new UsageError(`--burst: "${text}" is not a whole number of at least 1`);
  return burst;
}

function limitsText(k: KeyRecord): string {
  if (k.rate === undefined) return "default limits";
  return `rate ${k.rate}/s burst ${k.burst ?? `${Math.max(1, Math.ceil(k.rate * 4))} (4 s of rate)`}`;
}

/** One line per key: name, limits, dates, status. Never the key or its hash. */
function statusText(k: KeyRecord, nowMs: number): string {
  if (k.revoked) return `revoked ${k.revoked}`;
  if (k.suspended) return `suspended ${k.suspended} (its account, by the portal's operator)`;
  const grace = graceUntil(k, nowMs);
  return grace
    ? `active, rotated ${k.rotated}, old key valid until ${grace} (grace period)`
    : k.rotated
      ? `active, rotated ${k.rotated}`
      : "active";
}

const STRING = { type: "string" } as const;

async function main(argv: string[]): Promise<number> {
  const config = parseConfig(process.env);
  const file = config.keysFile;
  const { values, positionals } = parseCommandLine(
    {
      args: argv,
      allowPositionals: true,
      options: { rate: STRING, burst: STRING, grace: STRING, default: { type: "boolean" } },
    },
    USAGE,
  );
  const [command, name, ...rest] = positionals;
  const allowed: Record<string, readonly string[]> = {
    create: ["rate", "burst"],
    set: ["rate", "burst", "default"],
    rotate: ["grace"],
    revoke: [],
    list: [],
  };
  const flags = allowed[command ?? ""];
  if (!flags) throw new UsageError(command ? `unknown command "${command}"; ${USAGE}` : USAGE);
  const stray = Object.keys(values).find((f) => !flags.includes(f));
  if (stray) throw new UsageError(`${command} takes no --${stray}; ${USAGE}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"; ${USAGE}`);
  if ((command === "list") !== (name === undefined))
    throw new UsageError(command === "list" ? `list takes no name; ${USAGE}` : `${command} needs a key name; ${USAGE}`);
  const limits: Limits = {};
  const rate = parseRate(values.rate);
  const burst = parseBurst(values.burst);
  if (rate !== undefined) limits.rate = rate;
  if (burst !== undefined) limits.burst = burst;

  // KEYS_SYNC=shared: the change is made in Redis, and followed into this machine's copy (publish and follow have a
  // process of their own carry the file; a follower's copy refuses changes).
  const shared = config.keysSync === "shared" ? await startKeySyncFor("shared", config.redisUrl, file, "keys") : null;
  const where = shared ? "the keys shared through Redis" : file;
  try {
    switch (command) {
      case "create": {
        // The key alone on stdout, so that `KEY=$(npm run -s keys -- create x)` works.
        process.stdout.write((await createKey(file, name!, new Date(), limits)) + "\n");
        console.error(`created key "${name}" in ${where}; it is shown only now`);
        return 0;
      }
      case "set": {
        if (values.default && (rate !== undefined || burst !== undefined))
          throw new UsageError("set: --default cannot be combined with --rate or --burst");
        if (!values.default && rate === undefined && burst === undefined)
          throw new UsageError(`set needs --rate, --burst or --default; ${USAGE}`);
        const record = await setKeyLimits(file, name!, values.default ? "default" : limits);
        console.error(`key "${name}": ${limitsText(record)}; running servers apply it within seconds`);
        return 0;
      }
      case "rotate": {
        const grace = parseGrace(values.grace ?? DEFAULT_GRACE);
        const now = new Date();
        process.stdout.write((await rotateKey(file, name!, grace, now)) + "\n");
        const until = new Date(now.getTime() + grace).toISOString();
        console.error(
          `rotated key "${name}"; the new key is shown only now; ${grace > 0 ? `the old one works until ${until}` : "the old one is refused once servers reload (within seconds)"}`,
        );
        return 0;
      }
      case "revoke":
        await revokeKey(file, name!);
        console.error(`revoked key "${name}"; running servers refuse it after their next reload (within seconds)`);
        return 0;
      default: {
        await shared?.sync(); // this machine's copy brought up to date (unless Redis does not answer: then it says so)
        const { keys } = await loadKeysFile(file);
        if (keys.length === 0) console.error(`no keys in ${shared?.status().synced ? where : file}`);
        const now = Date.now();
        for (const k of keys)
          process.stdout.write(`${k.name}\t${limitsText(k)}\tcreated ${k.created}\t${statusText(k, now)}\n`);
        return 0;
      }
    }
  } finally {
    await shared?.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const input = err instanceof UsageError || err instanceof KeyInputError;
    const known = err instanceof KeysFileError || err instanceof KeysLockedError || err instanceof KeysUnavailableError;
    console.error(input || known ? `keys: ${err.message}` : err);
    process.exit(input ? 2 : 1);
  },
);
