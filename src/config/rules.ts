// The one set of parsing rules every command's settings follow (server.ts, portal.ts): a variable that is absent,
// empty or only whitespace is unset, so its default applies; a number is written in decimal digits; a switch is
// "0" or "1"; every problem is listed at once, each named by its variable.
import { z } from "zod";

/**
 * A value that is absent, empty or only whitespace is unset: its default applies (and an empty flag leaves the
 * variable in force). Whitespace must not reach the number fields, which would read it as 0 (PORT=" " a random port).
 */
export function isSet(v: string | undefined): v is string {
  return v !== undefined && v.trim() !== "";
}

/**
 * A number written in decimal digits (a sign and decimals are read so that their errors say what is wrong). Anything
 * else, such as 0x50, 1e3 or Infinity, which z.coerce would read as a number, is refused as not a number.
 */
export const decimal = (schema: z.ZodNumber) =>
  z.preprocess(
    (v) => (typeof v === "string" && !/^\s*[+-]?\d+(\.\d+)?\s*$/.test(v) ? Number.NaN : v),
    z.coerce.number().pipe(schema),
  );

/** A TCP port: 0 (any free one) to 65535. */
export const Port = decimal(z.number().int().min(0).max(65535));

/** A switch: "1" on, "0" off. */
export const onOff = (byDefault: "0" | "1") =>
  z
    .enum(["0", "1"])
    .default(byDefault)
    .transform((v) => v === "1");

/**
 * Parses the variables `names` (setting -> variable) of `env`, each overridden by a flag of `overrides` when that is
 * set, with `schema`; throws one line a problem, `configuration: <setting>: <what is wrong>`.
 */
export function parseWith<S extends z.ZodType>(
  schema: S,
  names: Record<string, string>,
  env: Record<string, string | undefined>,
  overrides: Record<string, string | undefined> = {},
): z.output<S> {
  const raw: Record<string, string> = {};
  for (const [field, name] of Object.entries(names)) {
    const value = isSet(overrides[field]) ? overrides[field] : env[name];
    if (isSet(value)) raw[field] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `configuration: ${i.path.join(".")}: ${i.message}`).join("\n"));
  }
  return parsed.data;
}
