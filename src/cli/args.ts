// Command-line parsing shared by the CLIs: node:util's parseArgs, with a malformed command line as a UsageError.
import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";

/** Bad command-line input: the CLI prints its message on one line and exits 2. */
export class UsageError extends Error {}

/**
 * `parseArgs(config)`, strict (unknown options and missing values are errors). A malformed command line is thrown
 * as a UsageError with the first sentence of parseArgs' message, followed by `; <usage>` when `usage` is given.
 */
export function parseCommandLine<T extends ParseArgsConfig>(config: T, usage?: string) {
  try {
    return parseArgs(config);
  } catch (err) {
    const first = (err as Error).message.split(/\.(?:\s|$)/)[0] ?? "";
    throw new UsageError(usage === undefined ? first : `${first}; ${usage}`);
  }
}
