// `npm run bench -- portal-signin [--burst 100]`: password guessing sent at once against the portal as `npm start`
// runs it (src/cli/start.ts in a child process with the server's node flags: the API and the portal in one process,
// SQLite in a temp dir, TRUST_PROXY=127.0.0.1 so that each client names its address in X-Forwarded-For). Two bursts,
// each client with its form token first (untimed): --burst wrong passwords for one account from as many addresses,
// then its right password from another; and --burst wrong passwords from one address to as many unknown accounts.
// Prints per burst the answers by status, how many passwords were checked (401: checked and wrong; the account's
// failed sign-ins on its audit trail agree), and the process's RSS rise: its peak during the burst (VmHWM, reset
// through /proc/<pid>/clear_refs before the burst, and VmRSS sampled every 5 ms) minus VmRSS before.
// Targets: at most the limit checked (10 an account, 50 an address), the right password refused, RSS rise < 100 MB.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { freePort } from "../scripts/lib/server-child.ts";
import { spawnReady } from "../scripts/lib/spawn-ready.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrations.ts";
import { hashPassword } from "../src/portal/passwords.ts";
import { createAccount, updateAccount } from "../src/portal/store/accounts.ts";
import { DEFAULT_THROTTLE } from "../src/portal/store/throttle.ts";
import { SERVER_NODE_FLAGS } from "../src/serve/http/server.ts";
import { PortalClient } from "../test/portal/portal-client.ts";
import type { Page } from "../test/portal/portal-client.ts";
import { fmtInt, verdict } from "./lib/report.ts";
import type { Verdict } from "./lib/report.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const RSS_TARGET_MB = 100;
const VICTIM = "victim@example.test";
const PASSWORD = "the victim's right password";

const { values: opts } = parseArgs({ options: { burst: { type: "string", default: "100" } } });
const burst = Number(opts.burst);

/** A field of /proc/<pid>/status, bytes. */
async function procKb(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
}

/** Runs `work` and returns its result with the process's RSS before it and its peak during it. */
async function withRss<T>(pid: number, work: () => Promise<T>) {
  const before = await procKb(pid, "VmRSS");
  const hwmReset = await writeFile(`/proc/${pid}/clear_refs`, "5").then(
    () => true,
    () => false,
  );
  let sampled = before;
  const sampler = setInterval(() => {
    procKb(pid, "VmRSS").then(
      (rss) => (sampled = Math.max(sampled, rss)),
      () => {},
    );
  }, 5);
  const result = await work();
  clearInterval(sampler);
  const hwm = hwmReset ? await procKb(pid, "VmHWM") : 0;
  return { result, before, peak: Math.max(sampled, hwm), hwmReset };
}

/** `n` clients, each with the sign-in form's token and cookie, from the address `address(i)` names. */
async function clients(url: string, n: number, address: (i: number) => string): Promise<PortalClient[]> {
  const list = Array.from({ length: n }, (_, i) => {
    const client = new PortalClient(url);
    client.extraHeaders["x-forwarded-for"] = address(i);
    return client;
  });
  for (let i = 0; i < n; i += 20) await Promise.all(list.slice(i, i + 20).map((c) => c.get("/sign-in")));
  return list;
}

const byStatus = (pages: Page[]) => {
  const counts = new Map<number, number>();
  for (const p of pages) counts.set(p.status, (counts.get(p.status) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a - b);
};
const count = (pages: Page[], status: number) => pages.filter((p) => p.status === status).length;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
/** A distinct address of the benchmarking range 198.18.0.0/15 for each `i`. */
const addressOf = (i: number) => `198.18.${Math.floor(i / 250)}.${(i % 250) + 1}`;

const root = await mkdtemp(join(tmpdir(), "fsa-bench-portal-signin-"));
const dataDir = join(root, "data");
const databaseUrl = join(dataDir, "portal.db");
await mkdir(dataDir, { recursive: true });

// The account guessed at, made as the demo account is: in the portal's database before the start.
const db = await openDatabase(databaseUrl);
let victimId: string;
try {
  await migrate(db, Date.now());
  const made = await createAccount(
    db,
    { email: VICTIM, partner: "Victim", password: await hashPassword(PASSWORD) },
    Date.now(),
  );
  victimId = made!.id;
  await updateAccount(db, victimId, { verified: Date.now(), status: "active" });
} finally {
  await db.close();
}

const [apiPort, portalPort] = [await freePort(), await freePort()];
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_ENV: "production",
  HOST: "127.0.0.1",
  PORT: String(apiPort),
  PORTAL_PORT: String(portalPort),
  DATA_DIR: dataDir,
  DATABASE_URL: databaseUrl,
  KEYS_FILE: "",
  BASE_URL: "",
  PORTAL_URL: "",
  SMTP_URL: "",
  WORKERS: "1",
  TRUST_PROXY: "127.0.0.1",
};
process.stderr.write("portal-signin: npm start (building the sample catalog first) ...\n");
const server = await spawnReady({
  name: "npm start",
  script: "src/cli/start.ts",
  cwd: ROOT,
  nodeArgs: SERVER_NODE_FLAGS,
  env,
  core: null,
  ready: { stream: "stdout", pattern: /developer portal \(sign up, make keys\) on http:\/\/127\.0\.0\.1:(\d+)/ },
  readyTimeoutMs: 300_000,
});
const url = `http://127.0.0.1:${server.port}`;
const verdicts: Verdict[] = [];
const lines: string[] = [];
try {
  // Warm up: one wrong password, so that the code paths and the pool's first hash are not the burst's.
  const readyRss = await procKb(server.pid, "VmRSS");
  await new Promise((r) => setTimeout(r, 5000)); // the API's work after start (sale lists composed ahead) settles
  const startRss = await procKb(server.pid, "VmRSS");
  const [warm] = await clients(url, 1, () => "198.19.255.1");
  await warm!.post("/sign-in", { email: "warm-up@example.test", password: "a wrong password" });
  await new Promise((r) => setTimeout(r, 2000));
  const warmRss = await procKb(server.pid, "VmRSS");

  // 1. One account, `burst` addresses.
  const guessers = await clients(url, burst, addressOf);
  const one = await withRss(server.pid, () => {
    const started = performance.now();
    return Promise.all(guessers.map((g, i) => g.post("/sign-in", { email: VICTIM, password: `guess ${i}` }))).then(
      (pages) => ({ pages, ms: performance.now() - started }),
    );
  });
  const [late] = await clients(url, 1, () => "198.19.255.2");
  const right = await late!.post("/sign-in", { email: VICTIM, password: PASSWORD });
  const audit = await openDatabase(databaseUrl);
  const failed = Number(
    (
      await audit.all("SELECT COUNT(*) AS n FROM audit WHERE account_id = ? AND event = 'signin.failed'", [victimId])
    )[0]!.n,
  );
  await audit.close();

  // 2. One address, `burst` unknown accounts.
  const sprayers = await clients(url, burst, () => "198.19.0.1");
  const two = await withRss(server.pid, () => {
    const started = performance.now();
    return Promise.all(
      sprayers.map((g, i) => g.post("/sign-in", { email: `nobody${i}@example.test`, password: `guess ${i}` })),
    ).then((pages) => ({ pages, ms: performance.now() - started }));
  });

  const accountLimit = DEFAULT_THROTTLE.account.failures;
  const addressLimit = DEFAULT_THROTTLE.address.failures;
  for (const [name, run, limit] of [
    [`${burst} wrong passwords for one account, from ${burst} addresses`, one, accountLimit],
    [`${burst} wrong passwords from one address, to ${burst} unknown accounts`, two, addressLimit],
  ] as const) {
    const { pages, ms } = run.result;
    const checked = count(pages, 401);
    const rise = run.peak - run.before;
    lines.push(
      `${name}:`,
      `  answers: ${byStatus(pages)
        .map(([s, n]) => `${n} x ${s}`)
        .join(", ")} in ${fmtInt(ms)} ms`,
      `  passwords checked (401): ${checked}; refused unchecked: ${pages.length - checked} (429: limit, 503: hashing pool full)`,
      `  RSS before ${mb(run.before)} MB, peak ${mb(run.peak)} MB: rise ${mb(rise)} MB${run.hwmReset ? "" : " (VmHWM could not be reset: sampled only)"}`,
    );
    verdicts.push(verdict(checked <= limit, `${name}: ${checked} checked, the limit is ${limit}`));
    verdicts.push(
      verdict(rise < RSS_TARGET_MB * 1024 * 1024, `${name}: RSS rise ${mb(rise)} MB < ${RSS_TARGET_MB} MB`),
    );
  }
  lines.push(
    `the account's failed sign-ins on its audit trail: ${failed}`,
    `its right password after the burst, from another address: ${right.status}${right.headers.get("retry-after") ? ` (Retry-After ${right.headers.get("retry-after")} s)` : ""}`,
    `RSS: ${mb(readyRss)} MB when ready, ${mb(startRss)} MB 5 s later (idle), ${mb(warmRss)} MB after the warm-up, ` +
      `${mb(Math.max(one.peak, two.peak))} MB at the bursts' peak (${mb(Math.max(one.peak, two.peak) - startRss)} MB ` +
      `over the idle start), ${mb(await procKb(server.pid, "VmRSS"))} MB at the end`,
  );
  verdicts.push(verdict(failed === count(one.result.pages, 401), "every 401 is on the audit trail, nothing else"));
  verdicts.push(verdict(right.status === 429, "the right password after the burst is refused (429) while locked"));
} finally {
  await server.stop();
  await rm(root, { recursive: true, force: true });
}
console.log(lines.join("\n"));
console.log(verdicts.map((v) => v.line).join("\n"));
if (verdicts.some((v) => !v.pass)) process.exitCode = 1;
