// The API keys file: a name, a hash and dates per key, never the key itself; every change made under a lock.
import { createHash, randomBytes, randomInt } from "node:crypto";
import { mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { acquireKeysLock } from "./keys-lock.ts";
import { changeFileOf, keysStoreFor } from "./keys-store.ts";

/**
 * The newest format written. 2 added `rotated` and `previous` (a replaced key's hash and the end of its grace
 * period); 3 added `suspended` (the portal's operator suspended the key's account). A file is written in the oldest
 * format that holds what it has (format 2 unless a key is suspended), so that API servers still on the code before
 * format 3 go on reading it during an upgrade.
 */
const KEYS_FORMAT = 3;
/** Formats read: files written by the code before rotation (format 1) and before suspension (2) still load. */
const READS: readonly number[] = [1, 2, 3];
export const KEY_RE = /^[A-Za-z0-9]{32}$/;
/**
 * How long a revoked key's record is kept (its tombstone): while it is, the revocation travels with every version of
 * the file, and a machine that finds Redis's keys forked from its own gives Redis its revocations again
 * (src/keys/tombstones.ts). Then the record is dropped, so the file does not grow with every key ever revoked.
 */
export const KEEP_REVOKED_MS = 30 * 86_400_000;
/** Tombstones kept per portal account (`p.<account>.`), the newest: an account cannot grow the file by churning keys. */
const KEEP_REVOKED_PER_ACCOUNT = 20;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HASH = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** A key replaced by `rotate`, valid until its grace period ends. */
const PreviousKeySchema = z.strictObject({ hash: HASH, until: z.iso.datetime() });

const KeyRecordSchema = z.strictObject({
  name: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
      "must be 1-64 letters, digits, _ . - (starting with a letter or digit)",
    ),
  /** `sha256:<hex>` of the key. Keys are 190 random bits, so a fast hash is enough: there is nothing to brute-force. */
  hash: HASH,
  created: z.string(),
  revoked: z.string().optional(),
  /** When the key was last replaced by `rotate`. */
  rotated: z.string().optional(),
  /** Keys replaced by `rotate` whose grace period had not ended when the file was last written. */
  previous: z.array(PreviousKeySchema).optional(),
  /** When the portal's operator suspended the key's account: refused by the API until reinstated (format 3). */
  suspended: z.string().optional(),
  /** Requests a second this key may make on average, and in a burst; the server's defaults when absent. */
  rate: z.number().positive().optional(),
  burst: z.number().int().positive().optional(),
});
export type KeyRecord = z.infer<typeof KeyRecordSchema>;

const KeysFileSchema = z.strictObject({ format: z.literal([1, 2, 3]), keys: z.array(KeyRecordSchema) });
export type KeysFile = z.infer<typeof KeysFileSchema>;

export interface Limits {
  /** Requests a second on average: a positive number. */
  rate?: number;
  /** Requests at once: an integer of at least 1; only with a rate of the key's own. */
  burst?: number;
}

export function hashKey(key: string): string {
  return "sha256:" + createHash("sha256").update(key).digest("hex");
}

/** A new key: 32 letters and digits, uniformly from a CSPRNG. */
export function generateKey(): string {
  let key = "";
  for (let i = 0; i < 32; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}

/** The keys file cannot be read, parsed, locked or written. */
export class KeysFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeysFileError";
  }
}

/** A change asked for that cannot be made: an unknown or duplicate name, a bad limit. The file is left as it was. */
export class KeyInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeyInputError";
  }
}

/** Reads the keys file; a missing file is an empty key set. */
export async function loadKeysFile(path: string): Promise<KeysFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { format: KEYS_FORMAT, keys: [] };
    throw new KeysFileError(`${path}: cannot read keys file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseKeysText(text, path);
}

/** Parses the text of a keys file (`source` names it in errors: a path, or where it came from). */
export function parseKeysText(text: string, source: string): KeysFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new KeysFileError(`${source}: keys file is not valid JSON`);
  }
  const format = (value as { format?: unknown } | null)?.format;
  if (typeof format === "number" && !READS.includes(format)) {
    throw new KeysFileError(
      `${source}: keys file format ${format} is not one this code reads (${READS.join(", ")})${format > KEYS_FORMAT ? ": it was written by newer code" : ""}`,
    );
  }
  const parsed = KeysFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new KeysFileError(`${source}: invalid keys file: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  return parsed.data;
}

/** The text of a keys file, in the oldest format that holds what `file` has. */
export function renderKeysFile(file: KeysFile): string {
  const format = file.keys.some((k) => k.suspended !== undefined) ? 3 : 2;
  return JSON.stringify({ ...file, format }, null, 2) + "\n";
}

/**
 * Writes the keys file atomically (temporary file, flushed, then renamed), readable by its owner only. The temporary
 * file has a name of its own (pid and random) and is created exclusively, so nothing already at that path (a file
 * of another mode, a symlink planted to have the keys written elsewhere) is ever written through; it is checked to
 * be a regular file of ours with mode 0600 before anything is written, and removed if anything fails.
 */
export async function writeKeysFile(path: string, file: KeysFile): Promise<void> {
  await writeKeysText(path, renderKeysFile(file));
}

/** Writes `text` (a whole keys file, already checked) as writeKeysFile does: atomically, mode 0600. */
export async function writeKeysText(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(8).toString("hex")}`;
  const handle = await open(tmp, "wx", 0o600);
  try {
    try {
      // Set on the open file (not by path): 0600 whatever the umask; then checked, on a file system that may ignore it.
      await handle.chmod(0o600);
      const stats = await handle.stat();
      const uid = process.getuid?.();
      if (!stats.isFile() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o777) !== 0o600) {
        throw new KeysFileError(
          `${tmp}: temporary keys file is not a regular file of ours with mode 0600 (mode ${(stats.mode & 0o777).toString(8)}, owner ${stats.uid}): not written`,
        );
      }
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/**
 * Reads the keys file, applies `change` and writes the result, holding the writers' lock throughout, so that
 * concurrent changes are applied one after another and none is lost. Grace periods ended by `now` are dropped.
 * Where this process shares the keys through Redis (KEYS_SYNC=shared), the change is made there instead
 * (src/keys/keys-store.ts), and the file gets it as every machine's copy does; a file that follows Redis is not
 * changed directly (the next version from Redis would undo it).
 */
export async function updateKeysFile<T>(path: string, now: Date, change: (file: KeysFile) => T): Promise<T> {
  const store = keysStoreFor(path);
  if (store) return store.update(now, change);
  if (await exists(changeFileOf(path)))
    throw new KeysFileError(
      `${path} is a copy of the keys in Redis (${changeFileOf(path)} is beside it): a change made to it would be overwritten; run with KEYS_SYNC=shared (and REDIS_URL) to change the keys there, or remove ${changeFileOf(path)} if this machine no longer follows Redis`,
    );
  const release = await mkdir(dirname(path), { recursive: true })
    .then(() => acquireKeysLock(path))
    .catch((err: unknown) => {
      throw errno(err) ? new KeysFileError(`${path}: cannot lock keys file: ${errno(err)}`) : err;
    });
  try {
    const file = await loadKeysFile(path);
    const result = applyKeysChange(file, now, change);
    await writeKeysFile(path, file).catch((err: unknown) => {
      throw errno(err) ? new KeysFileError(`${path}: cannot write keys file: ${errno(err)}`) : err;
    });
    return result;
  } finally {
    await release();
  }
}

/**
 * Applies `change` to `file` in place, then drops what is no longer needed: grace periods ended by `now` (and all but
 * the latest, as a rotation ends the one before it: files written before kept several), and revoked records older
 * than KEEP_REVOKED_MS or past the newest KEEP_REVOKED_PER_ACCOUNT of a portal account. So the file holds the live
 * keys, at most one replaced key each, and a bounded number of tombstones: a change as every store makes it.
 */
export function applyKeysChange<T>(file: KeysFile, now: Date, change: (file: KeysFile) => T): T {
  const result = change(file);
  for (const record of file.keys) {
    const live = record.previous?.filter((p) => Date.parse(p.until) > now.getTime());
    if (live?.length) record.previous = [live.reduce((a, b) => (Date.parse(b.until) > Date.parse(a.until) ? b : a))];
    else delete record.previous;
  }
  const kept = new Map<string, number>(); // tombstones kept so far, by account, newest first
  const dropped = new Set<KeyRecord>();
  const revoked = file.keys.filter((k) => k.revoked !== undefined);
  for (const record of revoked.sort((a, b) => Date.parse(b.revoked!) - Date.parse(a.revoked!))) {
    const account = /^p\.([^.]+)\./.exec(record.name)?.[1];
    const count = account === undefined ? 0 : (kept.get(account) ?? 0) + 1;
    if (account !== undefined) kept.set(account, count);
    if (Date.parse(record.revoked!) + KEEP_REVOKED_MS <= now.getTime() || count > KEEP_REVOKED_PER_ACCOUNT)
      dropped.add(record);
  }
  if (dropped.size) file.keys = file.keys.filter((k) => !dropped.has(k));
  return result;
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** The code of a file-system error (EACCES, ENOSPC...), if `err` is one. */
function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

function find(file: KeysFile, name: string, live: boolean): KeyRecord {
  const record = file.keys.find((k) => k.name === name);
  if (!record) throw new KeyInputError(`no key named "${name}"`);
  if (live && record.revoked) throw new KeyInputError(`key "${name}" was revoked on ${record.revoked}`);
  return record;
}

function checkLimits(limits: Limits, ownRate: boolean): void {
  if (limits.rate !== undefined && !(Number.isFinite(limits.rate) && limits.rate > 0))
    throw new KeyInputError(`rate must be a positive number of requests a second, not ${limits.rate}`);
  if (limits.burst !== undefined && !(Number.isSafeInteger(limits.burst) && limits.burst >= 1))
    throw new KeyInputError(`burst must be a whole number of at least 1, not ${limits.burst}`);
  if (limits.burst !== undefined && !ownRate)
    throw new KeyInputError("a burst needs a rate of the key's own: give the rate too");
}

/** Adds a key named `name` and returns the key (the only time it is ever seen). */
export async function createKey(path: string, name: string, now = new Date(), limits: Limits = {}): Promise<string> {
  const key = generateKey();
  checkLimits(limits, limits.rate !== undefined);
  const record = KeyRecordSchema.safeParse({ name, hash: hashKey(key), created: now.toISOString(), ...limits });
  if (!record.success) throw new KeyInputError(`name "${name}" ${record.error.issues[0]?.message}`);
  await updateKeysFile(path, now, (file) => {
    if (file.keys.some((k) => k.name === name)) throw new KeyInputError(`a key named "${name}" already exists`);
    file.keys.push(record.data);
  });
  return key;
}

/** Sets the rate and/or burst of the key named `name` ("default": the server's defaults again). */
export async function setKeyLimits(
  path: string,
  name: string,
  limits: Limits | "default",
  now = new Date(),
): Promise<KeyRecord> {
  return updateKeysFile(path, now, (file) => {
    const record = find(file, name, true);
    applyLimits(record, limits);
    return { ...record };
  });
}

/**
 * Sets the rate and/or burst of `record` in place ("default": removes both, so the server's defaults apply); throws
 * KeyInputError, changing nothing, for a limit that is not valid. For changes made inside `updateKeysFile`.
 */
export function applyLimits(record: KeyRecord, limits: Limits | "default"): void {
  if (limits === "default") {
    delete record.rate;
    delete record.burst;
    return;
  }
  checkLimits(limits, (limits.rate ?? record.rate) !== undefined);
  if (limits.rate !== undefined) record.rate = limits.rate;
  if (limits.burst !== undefined) record.burst = limits.burst;
}

/**
 * Replaces the key named `name` by a new one, which it returns. The old key stays valid for `graceMs` from `now`
 * (0: refused at once). A key replaced earlier whose grace period still runs is refused from now on: a key has at
 * most one replaced key, so rotations in a row cannot grow the file, and rotating again is how a partner whose new
 * key leaked ends the old one's grace too.
 */
export async function rotateKey(path: string, name: string, graceMs: number, now = new Date()): Promise<string> {
  const until = new Date(now.getTime() + graceMs);
  if (!(graceMs >= 0) || Number.isNaN(until.getTime()))
    throw new KeyInputError(`grace period out of range: ${graceMs} ms`);
  const key = generateKey();
  await updateKeysFile(path, now, (file) => {
    const record = find(file, name, true);
    if (graceMs > 0) record.previous = [{ hash: record.hash, until: until.toISOString() }];
    else delete record.previous;
    record.hash = hashKey(key);
    record.rotated = now.toISOString();
  });
  return key;
}

/** Marks the key named `name` revoked: it and any key it replaced are refused at once. */
export async function revokeKey(path: string, name: string, now = new Date()): Promise<void> {
  await updateKeysFile(path, now, (file) => {
    const record = find(file, name, true);
    record.revoked = now.toISOString();
    delete record.previous;
  });
}

/** The end of the latest grace period of a key replaced by `rotate`, if one is still running at `nowMs`. */
export function graceUntil(record: KeyRecord, nowMs: number): string | null {
  if (record.revoked) return null;
  const ends = (record.previous ?? []).map((p) => p.until).filter((u) => Date.parse(u) > nowMs);
  return ends.length ? ends.sort().at(-1)! : null;
}
