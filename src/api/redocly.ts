// Runs the Redocly CLI (@redocly/cli, a dependency) as a child process, with its telemetry and update checks off.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
/** The CLI's entry point, and its version (part of what decides the bytes of a page it renders). */
const CLI = require.resolve("@redocly/cli/bin/cli.js");
export const REDOCLY_VERSION = (require("@redocly/cli/package.json") as { version: string }).version;

/** What a run printed, and how it ended. */
export interface RedoclyRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `redocly <args>` in `cwd` with node's own binary and a minimal environment: REDOCLY_TELEMETRY=off (no usage
 * data sent, and none asked for by the page it builds) and no update notice. Never rejects for a non-zero exit.
 */
export function runRedocly(args: readonly string[], cwd: string): Promise<RedoclyRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1", CI: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
