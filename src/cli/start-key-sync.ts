// KEYS_SYNC for the CLI's processes (npm run serve, npm start, npm run portal, npm run keys): reads the setting, starts
// the key transport (src/keys/key-sync.ts, imported only when it is set, as ioredis is), routes the process's changes
// of the keys to Redis under KEYS_SYNC=shared, and says what it does on stderr.
import cluster from "node:cluster";
import { errorLine } from "../errors.ts";
import type { KeySync, KeySyncRole, KeySyncStatus } from "../keys/key-sync.ts";
import type { Metrics } from "../serve/metrics-registry.ts";

/** One JSON line on stderr, as the server's errors are. */
const warn = (event: string, message: string, err: unknown) =>
  process.stderr.write(JSON.stringify(errorLine("warn", event, err, { explain: (m) => `${message} (${m})` })) + "\n");

/** host:port/db of a Redis URL: never its user name or password. */
const where = (url: string) => {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`;
};

const since = (s: KeySyncStatus) =>
  s.syncedAt ? `change ${s.change}, in step at ${new Date(s.syncedAt).toISOString()}` : "none from Redis yet";

/**
 * Starts KEYS_SYNC's transport (`role`, read by the configuration) for `keysFile`: null when it is unset. `who` names the
 * process in its lines (`serve`, `portal`, `keys`); `onApplied` is the server's reload. Under `shared`, the process's
 * changes of the keys go to Redis until it is closed. Throws only for a bad setting.
 */
export async function startKeySyncFor(
  role: KeySyncRole | undefined,
  redisUrl: string | undefined,
  keysFile: string,
  who: string,
  onApplied?: () => void,
): Promise<KeySync | null> {
  if (!role) return null;
  const [{ startKeySync }, { changeFileOf, routeKeysChanges }] = await Promise.all([
    import("../keys/key-sync.ts"),
    import("../keys/keys-store.ts"),
  ]);
  const at = where(redisUrl!);
  const sync = startKeySync({
    redisUrl: redisUrl!,
    keysFile,
    role,
    ...(onApplied ? { onApplied } : {}),
    onSynced: (s) =>
      console.error(
        role === "publish"
          ? `${who}: keys published through Redis at ${at} (change ${s.change})`
          : `${who}: keys ${role === "shared" ? "shared" : "followed"} from Redis at ${at} (change ${s.change})`,
      ),
    onUnavailable: (err, s) =>
      role === "publish"
        ? warn("keys_publish_failed", `${keysFile} cannot be published through Redis at ${at}: trying again`, err)
        : warn(
            "keys_source_unavailable",
            `keys cannot be had from Redis at ${at}: serving the keys ${keysFile} holds (${since(s)}) until it answers${role === "shared" ? "; changes of the keys fail meanwhile" : ""}`,
            err,
          ),
    onSeeded: (change) =>
      console.error(`${who}: Redis at ${at} held no keys (or older ones): gave it ${keysFile} (change ${change})`),
    onBackwards: (change, had) =>
      warn(
        "keys_change_backwards",
        `Redis at ${at} holds other keys at change ${change}, below the change ${had} this machine had: applied as they are; if Redis was restored from an older copy, a key revoked since is valid again until the publisher publishes its keys file`,
        new Error("the keys' change number went backwards"),
      ),
    onRefused: (change, had) =>
      warn(
        "keys_copy_refused",
        `Redis at ${at} holds keys (change ${change}) whose history does not descend from this machine's copy ${keysFile} (change ${had}): not applied, the copy is served${role === "shared" ? " and its revocations are given to Redis" : ""}; the keys differ between machines until ${changeFileOf(keysFile)} is removed here (this machine then takes Redis's keys)`,
        new Error("the keys in Redis do not descend from this machine's copy"),
      ),
    onRevocationsGiven: (count, change) =>
      console.error(
        `${who}: gave Redis at ${at} ${count} revocation${count === 1 ? "" : "s"} this machine's copy holds, which its keys (change ${change}) did not have`,
      ),
  });
  if (!sync.store) return sync;
  const unroute = routeKeysChanges(keysFile, sync.store);
  return {
    ...sync,
    close: () => {
      unroute();
      return sync.close();
    },
  };
}

/** Adds the transport's gauges to the server's /metrics (labelled by worker, as the others are). */
export function addKeySyncMetrics(metrics: Metrics | null, sync: KeySync): void {
  if (!metrics) return;
  const labels: Record<string, string> = cluster.worker ? { worker: String(cluster.worker.id) } : {};
  const render = metrics.render.bind(metrics);
  // The handler's registry is its own (src/serve/metrics-registry.ts): these series are appended to its exposition.
  metrics.render = async () => {
    const exposition = await render();
    return { ...exposition, body: exposition.body + renderKeySyncMetrics(sync.status(), labels) };
  };
}

/** The status as Prometheus text (appended to the server's /metrics), with `labels` on every series. */
function renderKeySyncMetrics(status: KeySyncStatus, labels: Record<string, string> = {}): string {
  const l = Object.entries({ role: status.role, ...labels })
    .map(([k, v]) => `${k}="${v}"`)
    .join(",");
  const gauge = (name: string, help: string, value: number) =>
    `# HELP flash_sale_${name} ${help}\n# TYPE flash_sale_${name} gauge\nflash_sale_${name}{${l}} ${value}\n`;
  return (
    gauge(
      "keys_synced",
      "1 while the keys are in step with Redis (KEYS_SYNC); 0 while it cannot be reached and the last keys are served.",
      status.synced ? 1 : 0,
    ) +
    gauge("keys_change", "The change number of the keys last published or applied through Redis.", status.change) +
    gauge(
      "keys_synced_timestamp_seconds",
      "When the keys were last known to be in step with Redis, epoch seconds; 0 before that.",
      status.syncedAt / 1000,
    ) +
    `# HELP flash_sale_keys_refused_total Versions of the keys in Redis refused because their history does not descend from this machine's copy.\n# TYPE flash_sale_keys_refused_total counter\nflash_sale_keys_refused_total{${l}} ${status.refused}\n`
  );
}
