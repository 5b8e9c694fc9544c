// `npm run portal`: the developer portal on PORTAL_PORT (8081); `npm run portal -- admin <email>` makes an operator.
import { join } from "node:path";
import { parseConfig } from "../config.ts";
import { parsePortalConfig } from "../portal/config.ts";
import { openDatabase } from "../portal/db/database.ts";
import { migrate } from "../portal/db/migrations.ts";
import { createMailer } from "../portal/mailer.ts";
import { startPortal } from "../portal/server.ts";
import { findAccountByEmail, updateAccount } from "../portal/store/accounts.ts";

const log = (line: string) => console.error(line);

async function main(args: string[]): Promise<void> {
  const api = parseConfig(process.env);
  const config = parsePortalConfig(process.env);
  const databaseUrl = config.databaseUrl ?? join(api.dataDir, "portal.db");
  if (args[0] === "admin") {
    const email = args[1];
    if (!email || args.length > 2) throw new Error("usage: npm run portal -- admin <email>");
    const db = await openDatabase(databaseUrl);
    try {
      await migrate(db, Date.now());
      const account = await findAccountByEmail(db, email);
      if (!account) throw new Error(`no account has the email ${email}: sign up first`);
      await updateAccount(db, account.id, { role: "admin" });
      console.log(`portal: ${account.email} is an operator now`);
    } finally {
      await db.close();
    }
    return;
  }
  if (args.length) throw new Error(`unknown arguments: ${args.join(" ")} (usage: npm run portal [-- admin <email>])`);
  const portal = await startPortal({
    databaseUrl,
    host: config.host,
    port: config.port,
    ...(config.publicUrl ? { publicUrl: config.publicUrl.replace(/\/$/, "") } : {}),
    keysFile: api.keysFile,
    apiUrl: api.baseUrl,
    keyLimit: config.keyLimit,
    mailer: createMailer(config.smtpUrl, config.mailFrom, log),
    log,
  });
  if (portal.migrated.length) log(`portal: database schema migrated to version ${portal.migrated.at(-1)}`);
  if (!config.smtpUrl) log("portal: no SMTP_URL: verification and reset links are written here");
  console.log(`portal: serving the developer portal on ${portal.url}`);
  const stop = () => void portal.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`portal: ${(err as Error).message ?? String(err)}`);
  process.exit(1);
});
