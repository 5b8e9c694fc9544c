// The portal as the CLI starts it (npm run portal, npm start): settings in, a running portal out.
import { join } from "node:path";
import type { PortalConfig } from "./config.ts";
import { createMailer } from "./mailer.ts";
import { startPortal } from "./server.ts";
import type { RunningPortal } from "./server.ts";

/** The database the settings name: DATABASE_URL, else `<dataDir>/portal.db`. */
export const portalDatabaseUrl = (config: PortalConfig, dataDir: string) =>
  config.databaseUrl ?? join(dataDir, "portal.db");

/**
 * Starts the portal for the API whose data dir, keys file and public URL are given; `log` gets the portal's log
 * lines (mails when there is no SMTP, errors), which never hold a password, session ID, key or mailed token
 * other than a mail's own link.
 */
export async function runPortal(
  config: PortalConfig,
  api: { dataDir: string; keysFile: string; baseUrl: string },
  log: (line: string) => void,
): Promise<RunningPortal> {
  const portal = await startPortal({
    databaseUrl: portalDatabaseUrl(config, api.dataDir),
    host: config.host,
    port: config.port,
    ...(config.publicUrl ? { publicUrl: config.publicUrl.replace(/\/+$/, "") } : {}),
    keysFile: api.keysFile,
    apiUrl: api.baseUrl,
    keyLimit: config.keyLimit,
    approval: config.approval,
    trustProxy: config.trustProxy,
    mailer: createMailer(config.smtpUrl, config.mailFrom, log),
    log,
  });
  if (portal.migrated.length) log(`portal: database schema migrated to version ${portal.migrated.at(-1)}`);
  if (!config.smtpUrl) log("portal: no SMTP_URL: verification and reset links are written here");
  return portal;
}
