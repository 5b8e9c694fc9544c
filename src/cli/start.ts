// `npm start`: builds the embedded sample catalog when there is no (live) snapshot yet, makes a demo key, and serves.
import { access, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { buildSnapshot } from "../generate/index.ts";
import { liveSaleBegins, writeSampleCatalog } from "../catalog/sample/index.ts";
import { parseConfig } from "../config/api-settings.ts";
import type { Config } from "../config/api-settings.ts";
import { loadKeysFile } from "../keys/keys-file.ts";
import { MANIFEST_FILE, snapshotDir } from "../snapshot/format.ts";
import { currentSnapshotId, loadManifest } from "../snapshot/load.ts";
import { parsePortalConfig } from "../config/portal-settings.ts";
import type { PortalConfig } from "../config/portal-settings.ts";
import { openDatabase } from "../db/database.ts";
import { migrate } from "../db/migrations.ts";
import { createDemoAccount, DEMO_LABEL } from "../portal/demo-account.ts";
import { runPortal } from "../portal/run-portal.ts";
import { summarize } from "./build-summary.ts";
import { runServer } from "./run-server.ts";

/** A sample snapshot is regenerated when its last sale ends within this time, so a later `npm start` still shows live sales. */
const SAMPLE_MIN_LIFE_MS = 24 * 3600 * 1000;

/**
 * The portal's public URL as the portal will have it (PORTAL_URL, else http://PORTAL_HOST:PORTAL_PORT), for the
 * sample's reference page to link to. With PORTAL_PORT=0 the port is known only once it listens: the page's link,
 * like the sample's API links with PORT=0, names port 0.
 */
function portalUrlOf(portal: PortalConfig): string {
  if (portal.publicUrl) return portal.publicUrl.replace(/\/+$/, "");
  return `http://${portal.host.includes(":") ? `[${portal.host}]` : portal.host}:${portal.port}`;
}

/** Why the sample must be (re)built, or null when the published snapshot will do. */
async function sampleNeeded(config: Config, now: number): Promise<string | null> {
  const id = await currentSnapshotId(config.dataDir);
  if (id === null) return "no snapshot yet";
  let manifest;
  try {
    manifest = await loadManifest(config.dataDir, id);
  } catch (err) {
    const why = (err as Error).message;
    // An operator's snapshot that cannot be read (an older format, damage) is theirs to rebuild: never the sample's to replace.
    if ((await sourceOf(config.dataDir, id)) !== "sample")
      throw new Error(
        `the published snapshot ${id} cannot be read (${why}); it was not built from the sample catalog, so it is left as it is: rebuild it with npm run build, or set DATA_DIR to another directory`,
        { cause: err },
      );
    return `the published snapshot cannot be read (${why})`;
  }
  if (manifest.source !== "sample") return null; // an operator's own catalog: never replaced by the sample
  if (manifest.base_url !== config.baseUrl) return `its links point at ${manifest.base_url}, not ${config.baseUrl}`;
  if (manifest.live_until !== null && manifest.live_until * 1000 < now + SAMPLE_MIN_LIFE_MS)
    return "its sales have run out";
  return null;
}

/** Whether the published snapshot was built from the sample catalog, whose files are still there to build again. */
async function isSample(dataDir: string): Promise<boolean> {
  const id = await currentSnapshotId(dataDir);
  if (id === null || (await sourceOf(dataDir, id)) !== "sample") return false;
  return access(join(dataDir, "sample-catalog")).then(
    () => true,
    () => false,
  );
}

/** The `source` a snapshot's manifest names, read leniently (whatever its format), or null when it names none. */
async function sourceOf(dataDir: string, id: string): Promise<string | null> {
  try {
    const manifest = JSON.parse(await readFile(join(snapshotDir(dataDir, id), MANIFEST_FILE), "utf8")) as unknown;
    const source = (manifest as { source?: unknown } | null)?.source;
    return typeof source === "string" ? source : null;
  } catch {
    return null;
  }
}

/** The portal's demo account and its key (in the portal's database, migrated first, and the keys file). */
async function demoAccount(databaseUrl: string, keysFile: string) {
  const db = await openDatabase(databaseUrl);
  try {
    await migrate(db, Date.now());
    return await createDemoAccount(db, keysFile, Date.now());
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const portalConfig = parsePortalConfig(process.env);
  const portalUrl = portalUrlOf(portalConfig);
  const now = Date.now();
  const reason = await sampleNeeded(config, now);
  const catalogDir = join(config.dataDir, "sample-catalog");
  const sample = { catalogDir, dataDir: config.dataDir, baseUrl: config.baseUrl, portalUrl, source: "sample" };
  if (reason) {
    console.error(`start: building the sample catalog (${reason})...`);
    await rm(catalogDir, { recursive: true, force: true });
    await writeSampleCatalog(catalogDir, { now: new Date(now), live: true });
    console.error(summarize(await buildSnapshot({ ...sample, force: true })));
  } else if (await isSample(config.dataDir)) {
    // The same sample built again: nothing is done unless an option changed, such as the portal's URL, which the
    // reference page links to (the build compares its options' digest with the published snapshot's).
    const result = await buildSnapshot(sample);
    if (result.changed) console.error(`start: the sample rebuilt for the portal at ${portalUrl}: ${summarize(result)}`);
  }

  const { keys } = await loadKeysFile(config.keysFile);
  const live = keys.filter((k) => !k.revoked);
  let key = "<your key>";
  let demo = null;
  if (keys.length === 0) {
    demo = await demoAccount(config.databaseUrl, config.keysFile);
    key = demo.key;
    console.log(`start: created API key "${DEMO_LABEL}": ${key}`);
    console.log(`start: its usage is in the portal: sign in as ${demo.email} with the password ${demo.password}`);
  } else {
    console.error(
      `start: ${live.length} API key(s) in ${config.keysFile} (only hashes are stored; make another with: npm run keys -- create <name>)`,
    );
  }
  const { port } = await runServer({ ...config });
  const base = config.baseUrl.replace(`:${config.port}`, `:${port}`);
  console.log(
    `start: serving on ${config.tls ? "https" : "http"}://${config.host}:${port}; try:\n  curl '${base}/v1/sales/active.json?apikey=${key}'`,
  );
  // A sample just built has a sale beginning a minute or two from now (live-sales.ts): worth watching on the stream.
  const begins = reason ? ` (a sample sale begins at ${new Date(liveSaleBegins(now)).toISOString()})` : "";
  console.log(`start: sale events as they happen${begins}:\n  curl -N '${base}/v1/events?apikey=${key}'`);
  const portal = await runPortal(portalConfig, { ...config, baseUrl: base }, (l) => console.error(l));
  console.log(`start: developer portal (sign up, make keys) on ${portal.url}`);
  if (demo) console.log(`start: the demo key's usage: ${portal.url}/usage (signed in as ${demo.email})`);
}

main().catch((err: unknown) => {
  console.error(`start: ${(err as Error).message ?? String(err)}`);
  process.exit(1);
});
