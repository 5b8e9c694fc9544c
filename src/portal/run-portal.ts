// The portal as the CLI starts it (npm run portal, npm start): settings in, a running portal out.
import type { PortalConfig } from "../config/portal-settings.ts";
import { createMailer } from "./mailer.ts";
import { startPortal } from "./server.ts";
import type { RunningPortal } from "./server.ts";

/**
 * Starts the portal for the API whose keys file, public URL and database (DATABASE_URL, src/config/api-settings.ts) are given; `log` gets the portal's log
 * lines (mails when there is no SMTP, errors), which never hold a password, session ID, key or mailed token
 * other than a mail's own link.
 */
export async function runPortal(
  config: PortalConfig,
  api: { keysFile: string; baseUrl: string; databaseUrl: string },
  log: (line: string) => void,
): Promise<RunningPortal> {
  const portal = await startPortal({
    databaseUrl: api.databaseUrl,
    host: config.host,
    port: config.port,
    ...(config.publicUrl ? { publicUrl: config.publicUrl.replace(/\/+$/, "") } : {}),
    keysFile: api.keysFile,
    apiUrl: api.baseUrl,
    keyLimit: config.keyLimit,
    approval: config.approval,
    trustProxy: config.trustProxy,
    secretKey: config.secretKey ?? null,
    webhookSettings: { apiKey: config.webhooksApiKey, allow: config.webhooksAllow },
    mailer: createMailer(config.smtpUrl, config.mailFrom, log),
    log,
  });
  if (portal.migrated.length) log(`portal: database schema migrated to version ${portal.migrated.at(-1)}`);
  if (!config.smtpUrl) log("portal: no SMTP_URL: verification and reset links are written here");
  return portal;
}
