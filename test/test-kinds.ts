// Which test files are unit tests: those that start no process, server, daemon or browser. A file is a system test
// when its text names one of the starters below; every other file is a unit test, and runs in the `unit` project
// with test/unit-guard.ts, which makes any listen or child process throw: a file that starts one without naming a
// starter here fails loudly there, instead of slowing the fast tests down unnoticed. Read by vitest.config.ts.
import { readFileSync } from "node:fs";

/** Names whose presence in a test file means it starts a process, a server, a daemon or a browser. */
const STARTERS = [
  /\bstart[A-Z]\w*\(/, // startTestApi, startTestPortal, startRedis, startPostgres, startSmtpServer, startNginx...
  /\bwithPostgresAndSmtp\(/, // PostgreSQL and the SMTP sink for a file's tests
  /\bspawn\w*\(/,
  /\bexec(File)?(Sync)?\(/,
  /\bfork\(/,
  /\.listen\(/,
  /\bcreateServer\(/,
  /\bfreePort\(/,
  /\brunSoak\(/,
  /\bbuildSnapshot\(/, // a build runs Redocly in a child process for /docs
  /redocly/i,
  /\bdescribeEdgeContract\(/,
  /chromium|playwright/,
];

/** Whether the test file at `path` starts nothing (the unit project) or something (the system project). */
export function isUnitTest(path: string): boolean {
  const text = readFileSync(path, "utf8");
  return !STARTERS.some((re) => re.test(text));
}
