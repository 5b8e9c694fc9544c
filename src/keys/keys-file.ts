// The API keys file: a name, a hash and dates per key, never the key itself.
import { createHash, randomInt } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import { z } from "zod";

export const KEYS_FORMAT = 1;
export const KEY_RE = /^[A-Za-z0-9]{32}$/;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export const KeyRecordSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be 1-64 letters, digits, _ . -"),
  /** `sha256:<hex>` of the key. Keys are 190 random bits, so a fast hash is enough: there is nothing to brute-force. */
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  created: z.string(),
  revoked: z.string().optional(),
  /** Requests a second this key may make on average, and in a burst; the server's defaults when absent. */
  rate: z.number().positive().optional(),
  burst: z.number().int().positive().optional(),
});
export type KeyRecord = z.infer<typeof KeyRecordSchema>;

export const KeysFileSchema = z.strictObject({ format: z.literal(KEYS_FORMAT), keys: z.array(KeyRecordSchema) });
export type KeysFile = z.infer<typeof KeysFileSchema>;

export function hashKey(key: string): string {
  return "sha256:" + createHash("sha256").update(key).digest("hex");
}

/** A new key: 32 letters and digits, uniformly from a CSPRNG. */
export function generateKey(): string {
  let key = "";
  for (let i = 0; i < 32; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}

export class KeysFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeysFileError";
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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new KeysFileError(`${path}: keys file is not valid JSON`);
  }
  const parsed = KeysFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new KeysFileError(`${path}: invalid keys file: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  return parsed.data;
}

/** Writes the keys file atomically (temporary file, then rename), readable by its owner only. */
export async function writeKeysFile(path: string, file: KeysFile): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, JSON.stringify(file, null, 2) + "\n", { mode: 0o600 });
  await rename(tmp, path);
}

/** Adds a key named `name` and returns the key (the only time it is ever seen). */
export async function createKey(path: string, name: string, now = new Date(), limits: { rate?: number; burst?: number } = {}): Promise<string> {
  const file = await loadKeysFile(path);
  if (file.keys.some((k) => k.name === name)) throw new KeysFileError(`a key named "${name}" already exists`);
  const key = generateKey();
  const record = KeyRecordSchema.safeParse({ name, hash: hashKey(key), created: now.toISOString(), ...limits });
  if (!record.success) throw new KeysFileError(`name "${name}" ${record.error.issues[0]?.message}`);
  file.keys.push(record.data);
  await writeKeysFile(path, file);
  return key;
}

/** Marks the key named `name` revoked. */
export async function revokeKey(path: string, name: string, now = new Date()): Promise<void> {
  const file = await loadKeysFile(path);
  const record = file.keys.find((k) => k.name === name);
  if (!record) throw new KeysFileError(`no key named "${name}"`);
  if (record.revoked) throw new KeysFileError(`key "${name}" was already revoked on ${record.revoked}`);
  record.revoked = now.toISOString();
  await writeKeysFile(path, file);
}
